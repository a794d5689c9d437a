import { receiveProcessorEvent } from '../../../lib/billing/receive.ts';
import { SIGNATURE_HEADER } from '../../../lib/billing/signature.ts';
import { defineRoute, type NoInput } from '../../route.ts';
import { processorDelivery, receipt } from './schemas.ts';

// The processor's receiver (docs/billing.md): no API key, the `Stripe-Signature` over the raw body
// is its credential, so hapi hands over the bytes unparsed. It draws from no rate budget (a
// refused delivery is one the processor retries, late), and is bounded by the body's size.
const MAX_EVENT_BYTES = 512 * 1024;

export const processorReceiverRoute = defineRoute<NoInput, NoInput, Buffer>({
  method: 'POST',
  path: '/v1/billing/processor/stripe',
  options: {
    id: 'billing.processorReceive',
    auth: false,
    description: "Receive the payment processor's events (Stripe)",
    notes:
      'Called by the payment processor (Stripe), not by API clients: its `Stripe-Signature` header (`t=…,v1=…`, HMAC-SHA256 over `t.body` with the endpoint secret `BILLING_WEBHOOK_SECRET`, 5 minutes of tolerance, several `v1` accepted during a rotation) is the credential. A bad signature or a stale timestamp gets 400 `validation_error` (param `Stripe-Signature`) and is recorded nowhere. An event already recorded is acknowledged (200, `duplicate`) and changes nothing; an event about a customer no workspace is linked to is acknowledged (200, `unlinked`) and kept nowhere.',
    tags: ['api', 'billing'],
    payload: { parse: false, output: 'data', maxBytes: MAX_EVENT_BYTES, allow: ['application/json'] },
    plugins: {
      valise: {
        rateLimited: false,
        sdk: { excluded: "the payment processor's webhook receiver: its client is the processor" },
        openapi: {
          rawJsonBody: processorDelivery,
          errors: [400, 413, 415],
          requestHeaders: {
            'Stripe-Signature': {
              required: true,
              description: '`t=<unix seconds>,v1=<hex HMAC-SHA256>` (several `v1` during a secret rotation).',
              schema: { type: 'string' },
            },
          },
        },
      },
    },
    response: { schema: receipt },
  },
  handler: (request) => {
    const header: unknown = request.headers[SIGNATURE_HEADER];
    const signature = typeof header === 'string' ? header : undefined;
    return receiveProcessorEvent(request.server.app.services, request.payload, signature);
  },
});
