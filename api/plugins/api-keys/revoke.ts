import Joi from 'joi';
import { revokeApiKey } from '../../../lib/api-keys/service.ts';
import { REVOCATION_REASONS, type RevocationReason } from '../../../lib/vocabulary.ts';
import { defineRoute, orNull } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { revokedApiKey } from './schemas.ts';

/** `reason` is accepted in the body or the query string. */
type RevokeInput = { reason?: RevocationReason };

const reason = Joi.string().valid(...REVOCATION_REASONS);

export const revokeRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/api-keys/{id}',
  options: {
    id: 'apiKeys.revoke',
    description: 'Revoke an API key',
    notes: 'The key stops authenticating at once and `api_key.revoked` fires. Revoking twice is harmless.',
    tags: ['api', 'api-keys'],
    plugins: { valise: { scope: 'api_keys:manage', audit: { action: 'api_key.revoke', resourceType: 'api_key' } } },
    validate: {
      params: idParams,
      query: Joi.object<RevokeInput>({ reason }),
      payload: orNull(Joi.object<RevokeInput>({ reason })).label('RevokeApiKey'),
    },
    response: { schema: revokedApiKey },
  },
  handler: (request) => {
    const why = request.payload?.reason ?? request.query.reason ?? 'manual';
    return revokeApiKey(request.server.app.services, callerOf(request), request.params.id, why);
  },
});
