import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { revokeApiKey } from '../../../lib/api-keys/service.ts';
import { idParams } from '../../schemas.ts';
import { callerOf, idParam } from '../../types.ts';
import { REVOCATION_REASONS, revokedApiKey } from './schemas.ts';

const reason = Joi.string().valid(...REVOCATION_REASONS);

export const revokeRoute: ServerRoute = {
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
      query: Joi.object({ reason }),
      payload: Joi.object({ reason }).allow(null).label('RevokeApiKey'),
    },
    response: { schema: revokedApiKey },
  },
  handler: (request) => {
    const body = request.payload as { reason?: string } | null;
    const query = request.query as { reason?: string };
    const why = body?.reason ?? query.reason ?? 'manual';
    return revokeApiKey(request.server.app.services, callerOf(request), idParam(request), why);
  },
};
