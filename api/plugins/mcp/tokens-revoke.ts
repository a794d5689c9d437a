import { revokeMcpToken } from '../../../lib/mcp/tokens.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { revokedMcpToken } from './schemas.ts';

export const revokeTokenRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/mcp/tokens/{id}',
  options: {
    id: 'mcp.revokeToken',
    description: 'Revoke an MCP token',
    notes:
      'The token stops opening the MCP routes at once (401 `revoked_api_key`). Revoking a revoked token changes nothing.',
    tags: ['api', 'mcp'],
    plugins: {
      valise: { scope: 'mcp:manage', audit: { action: 'mcp_token.revoke', resourceType: 'mcp_token' } },
    },
    validate: { params: idParams },
    response: { schema: revokedMcpToken },
  },
  handler: (request) => revokeMcpToken(request.server.app.services, callerOf(request), request.params.id),
});
