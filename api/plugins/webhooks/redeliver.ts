import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { redeliver } from '../../../lib/webhooks/deliveries.ts';
import { id } from '../../schemas.ts';
import { callerOf, idParam } from '../../types.ts';
import { deliveryAttempt } from './schemas.ts';

export const redeliverRoute: ServerRoute = {
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
    validate: { params: Joi.object({ id: id.required(), deliveryId: id.required() }) },
    response: { schema: deliveryAttempt },
  },
  handler: (request) =>
    redeliver(
      request.server.app.services,
      callerOf(request),
      idParam(request),
      (request.params as { deliveryId: string }).deliveryId,
    ),
};
