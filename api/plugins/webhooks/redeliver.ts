import Joi from 'joi';
import { redeliver } from '../../../lib/webhooks/deliveries.ts';
import { defineRoute } from '../../route.ts';
import { id } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { deliveryAttempt } from './schemas.ts';

export const redeliverRoute = defineRoute({
  method: 'POST',
  path: '/v1/webhooks/{id}/deliveries/{deliveryId}/retry',
  options: {
    id: 'webhooks.retryDelivery',
    description: 'Redeliver an event',
    notes:
      "Sends the delivery's event again now, with the same `webhook-id` and fresh signatures, and returns the " +
      'attempt. Works on any past delivery, succeeded or not; the automatic schedule is not changed.',
    tags: ['api', 'webhooks'],
    plugins: {
      valise: {
        scope: 'webhooks:manage',
        rateClass: 'expensive',
        audit: { action: 'webhook.redeliver', resourceType: 'webhook' },
      },
    },
    validate: {
      params: Joi.object<{ id: string; deliveryId: string }>({ id: id.required(), deliveryId: id.required() }),
    },
    response: { schema: deliveryAttempt },
  },
  handler: (request) =>
    redeliver(request.server.app.services, callerOf(request), request.params.id, request.params.deliveryId),
});
