import { sendTestPing } from '../../../lib/webhooks/deliveries.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { deliveryAttempt } from './schemas.ts';

export const testRoute = defineRoute({
  method: 'POST',
  path: '/v1/webhooks/{id}/test',
  options: {
    id: 'webhooks.test',
    description: 'Send a test delivery',
    notes:
      'Sends a signed `ping` event to this webhook now (even if it is disabled or not subscribed to `ping`) and ' +
      'returns the attempt: status code, duration, response excerpt. One attempt, no retries.',
    tags: ['api', 'webhooks'],
    plugins: {
      valise: {
        scope: 'webhooks:manage',
        rateClass: 'expensive',
        audit: { action: 'webhook.test', resourceType: 'webhook' },
      },
    },
    validate: { params: idParams },
    response: { schema: deliveryAttempt },
  },
  handler: (request) => sendTestPing(request.server.app.services, callerOf(request), request.params.id),
});
