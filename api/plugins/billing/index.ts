import type { Plugin } from '@hapi/hapi';
import { invoicesRoute } from './invoices.ts';
import { processorEventsRoute } from './processor-events.ts';
import { processorReceiverRoute } from './processor-receiver.ts';
import { subscriptionRoute } from './subscription.ts';

// /v1/billing (docs/billing.md): the workspace's subscription, invoices and processor events (API
// keys), and the payment processor's signed webhook receiver (no API key).
export const billingPlugin: Plugin<void> = {
  name: 'valise-billing',
  register(server) {
    server.route([subscriptionRoute, invoicesRoute, processorEventsRoute, processorReceiverRoute]);
  },
};
