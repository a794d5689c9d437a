import Joi from 'joi';
import { revokePublishableKey } from '../../../lib/intakes/owner-keys.ts';
import { defineRoute } from '../../route.ts';
import { id } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { intakeId, publishableKey } from './schemas.ts';

export const keysRevokeRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/intakes/{id}/publishable-keys/{keyId}',
  options: {
    id: 'intakes.revokePublishableKey',
    description: 'Revoke a publishable key',
    notes: 'It stops working at once. Revoking it again answers the same key.',
    tags: ['api', 'intakes'],
    plugins: {
      valise: { scope: 'intake:write', audit: { action: 'intake.publishable_key_revoke', resourceType: 'intake' } },
    },
    validate: {
      params: Joi.object<{ id: string; keyId: string }>({ id: intakeId.required(), keyId: id.required() }),
    },
    response: { schema: publishableKey },
  },
  handler: (request) =>
    revokePublishableKey(request.server.app.services, callerOf(request), request.params.id, request.params.keyId),
});
