import Joi from 'joi';
import { type CreateMcpTokenInput, createMcpToken } from '../../../lib/mcp/tokens.ts';
import { defineRoute } from '../../route.ts';
import { scope, text } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { mcpTokenWithValue } from './schemas.ts';

export const createTokenRoute = defineRoute({
  method: 'POST',
  path: '/v1/mcp/tokens',
  options: {
    id: 'mcp.createToken',
    description: 'Issue an MCP token',
    notes:
      "The bearer token an MCP client sends to the workspace's hosted MCP endpoint; returned once (`token`, `svc_mcp_…`). Bound to the calling key's workspace and environment, holding `scopes` (each a scope the calling key holds: 403 `scope_missing` otherwise), which decide the tools it may run. Granting a sensitive scope needs a current verification code in `mfa_code` (401 `mfa_required`), as for an API key. `expires_in_days`: none means it never expires. It opens the MCP routes only.",
    tags: ['api', 'mcp'],
    plugins: {
      valise: { scope: 'mcp:manage', audit: { action: 'mcp_token.create', resourceType: 'mcp_token' } },
    },
    validate: {
      payload: Joi.object<CreateMcpTokenInput>({
        name: text.trim().max(100).allow(''),
        scopes: Joi.array().items(scope).min(1).max(64).unique().required(),
        expires_in_days: Joi.number().positive().max(3650),
        mfa_code: text.trim().max(16),
      }).label('CreateMcpToken'),
    },
    response: { status: { 201: mcpTokenWithValue } },
  },
  handler: async (request, h) =>
    h.response(await createMcpToken(request.server.app.services, callerOf(request), request.payload)).code(201),
});
