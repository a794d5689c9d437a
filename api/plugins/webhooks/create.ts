import Joi from 'joi';
import { type CreateWebhookInput, createWebhook } from '../../../lib/webhooks/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { description, events, name, webhookUrl, webhookWithSecret } from './schemas.ts';

export const createRoute = defineRoute({
  method: 'POST',
  path: '/v1/webhooks',
  options: {
    id: 'webhooks.create',
    description: 'Create a webhook',
    notes:
      'HTTPS `url`; `events` default `["transfer.downloaded"]`. The signing secret (`secret`, `whsec_…`) is returned once. At most 25 per environment.',
    tags: ['api', 'webhooks'],
    plugins: { valise: { scope: 'webhooks:manage', audit: { action: 'webhook.create', resourceType: 'webhook' } } },
    validate: {
      payload: Joi.object<CreateWebhookInput>({ url: webhookUrl.required(), events, name, description }).label(
        'CreateWebhook',
      ),
    },
    response: { status: { 201: webhookWithSecret } },
  },
  handler: async (request, h) =>
    h.response(await createWebhook(request.server.app.services, callerOf(request), request.payload)).code(201),
});
