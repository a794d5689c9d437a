import Joi from 'joi';
import { type UpdateWebhookInput, updateWebhook } from '../../../lib/webhooks/service.ts';
import { defineRoute } from '../../route.ts';
import { id } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { description, events, name, webhook, webhookUrl } from './schemas.ts';

export const updateRoute = defineRoute({
  method: 'PATCH',
  path: '/v1/webhooks',
  options: {
    id: 'webhooks.update',
    description: 'Update a webhook',
    notes: 'The webhook `id` goes in the body. `is_active: true` re-enables a webhook disabled after failures.',
    tags: ['api', 'webhooks'],
    plugins: { valise: { scope: 'webhooks:manage', audit: { action: 'webhook.update', resourceType: 'webhook' } } },
    validate: {
      payload: Joi.object<UpdateWebhookInput>({
        id: id.required(),
        url: webhookUrl,
        events,
        name,
        description,
        is_active: Joi.boolean(),
      })
        .min(2)
        .label('UpdateWebhook'),
    },
    response: { schema: webhook },
  },
  handler: (request) => updateWebhook(request.server.app.services, callerOf(request), request.payload),
});
