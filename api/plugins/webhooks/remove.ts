import Joi from 'joi';
import { deleteWebhook } from '../../../lib/webhooks/service.ts';
import { defineRoute } from '../../route.ts';
import { id } from '../../schemas.ts';
import { callerOf } from '../../types.ts';

export const removeRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/webhooks',
  options: {
    id: 'webhooks.delete',
    description: 'Delete a webhook',
    notes: 'The webhook `id` goes in the body.',
    tags: ['api', 'webhooks'],
    plugins: { valise: { scope: 'webhooks:manage', audit: { action: 'webhook.delete', resourceType: 'webhook' } } },
    validate: { payload: Joi.object<{ id: string }>({ id: id.required() }).label('DeleteWebhook') },
    response: {
      schema: Joi.object({
        id: id.required(),
        object: Joi.string().valid('webhook').required(),
        deleted: Joi.boolean().valid(true).required(),
      }).label('DeletedWebhook'),
    },
  },
  handler: (request) => deleteWebhook(request.server.app.services, callerOf(request), request.payload.id),
});
