import Joi from 'joi';
import { listMcpTokens } from '../../../lib/mcp/tokens.ts';
import type { PageQuery } from '../../../lib/pagination.ts';
import { defineRoute } from '../../route.ts';
import { pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { mcpTokenList } from './schemas.ts';

export const listTokensRoute = defineRoute({
  method: 'GET',
  path: '/v1/mcp/tokens',
  options: {
    id: 'mcp.listTokens',
    description: 'List MCP tokens',
    notes:
      'Newest first, revoked and expired ones included, with their scopes; only the calling environment; never the token values.',
    tags: ['api', 'mcp'],
    plugins: { valise: { scope: 'mcp:manage' } },
    validate: { query: Joi.object<PageQuery>(pageQuery()) },
    response: { schema: mcpTokenList },
  },
  handler: (request) => listMcpTokens(request.server.app.services, callerOf(request), request.query),
});
