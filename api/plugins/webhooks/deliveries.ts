import Joi from 'joi';
import { type AttemptQuery, listAttempts } from '../../../lib/webhooks/deliveries.ts';
import { defineRoute } from '../../route.ts';
import { id, idParams, pageQuery, text } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { deliveryAttemptList } from './schemas.ts';

export const deliveriesRoute = defineRoute({
  method: 'GET',
  path: '/v1/webhooks/{id}/deliveries',
  options: {
    id: 'webhooks.deliveries',
    description: "List a webhook's delivery attempts",
    notes:
      'Every attempt, newest first: scheduled ones, manual redeliveries and tests. Filter by `event_id` or `delivery_id`.',
    tags: ['api', 'webhooks'],
    plugins: { valise: { scope: 'webhooks:read' } },
    validate: {
      params: idParams,
      query: Joi.object<AttemptQuery>({ ...pageQuery(), event_id: text.max(100), delivery_id: id }),
    },
    response: { schema: deliveryAttemptList },
  },
  handler: (request) => listAttempts(request.server.app.services, callerOf(request), request.params.id, request.query),
});
