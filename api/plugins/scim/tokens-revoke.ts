import { revokeScimToken } from '../../../lib/scim/tokens.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { revokedScimToken } from './schemas.ts';

export const revokeTokenRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/scim/tokens/{id}',
  options: {
    id: 'scim.revokeToken',
    description: 'Revoke a SCIM token',
    notes:
      'The token stops opening /v1/scim at once (401 `revoked_api_key`). Revoking a revoked token changes nothing.',
    tags: ['api', 'scim'],
    plugins: {
      valise: { scope: 'api_keys:manage', audit: { action: 'scim_token.revoke', resourceType: 'scim_token' } },
    },
    validate: { params: idParams },
    response: { schema: revokedScimToken },
  },
  handler: (request) => revokeScimToken(request.server.app.services, callerOf(request), request.params.id),
});
