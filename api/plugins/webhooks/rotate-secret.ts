import { rotateWebhookSecret } from '../../../lib/webhooks/service.ts';
import { defineRoute } from '../../route.ts';
import { idParams, timestamp } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { webhookWithSecret } from './schemas.ts';

export const rotateSecretRoute = defineRoute({
  method: 'POST',
  path: '/v1/webhooks/{id}/rotate-secret',
  options: {
    id: 'webhooks.rotateSecret',
    description: "Rotate a webhook's signing secret",
    notes: 'Returns the new secret once. For 24 hours deliveries carry signatures with both secrets.',
    tags: ['api', 'webhooks'],
    plugins: {
      valise: { scope: 'webhooks:manage', audit: { action: 'webhook.rotate_secret', resourceType: 'webhook' } },
    },
    validate: { params: idParams },
    response: { schema: webhookWithSecret.keys({ previous_secret_expires_at: timestamp.required() }) },
  },
  handler: (request) => rotateWebhookSecret(request.server.app.services, callerOf(request), request.params.id),
});
