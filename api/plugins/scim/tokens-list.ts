import { listScimTokens } from '../../../lib/scim/tokens.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { scimTokenList } from './schemas.ts';

export const listTokensRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/tokens',
  options: {
    id: 'scim.listTokens',
    description: 'List SCIM tokens',
    notes: 'Newest first, revoked ones included; never the token values.',
    tags: ['api', 'scim'],
    plugins: { valise: { scope: 'api_keys:manage' } },
    response: { schema: scimTokenList },
  },
  handler: (request) => listScimTokens(request.server.app.services, callerOf(request)),
});
