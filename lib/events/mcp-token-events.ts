import { z } from 'zod';
import type { McpTokenRow } from '../db/queries/mcp-tokens.ts';
import { ENVIRONMENTS } from '../vocabulary.ts';
import { EMITTED, event } from './define.ts';

// mcp_token.*: what the MCP token routes record (docs/mcp.md, "Tokens"), as api_key.* does for keys:
// a token opens a workspace's data to an agent, so its issue and its end are worth a webhook.

const McpTokenEventView = z
  .object({
    id: z.uuid().describe('The token id.'),
    name: z.string().describe('The token name.'),
    token_prefix: z.string().describe('`svc_mcp_` plus six characters, as lists show it; never the full value.'),
    scopes: z.array(z.string().describe('A scope, `resource:action`.')).describe('Scopes the token holds.'),
    environment: z.enum(ENVIRONMENTS).describe('The token environment.'),
    user_id: z.uuid().describe('The member the token acts for.'),
    expires_at: z.iso.datetime().nullable().describe('When the token stops working; null for never.'),
  })
  .meta({ title: 'McpTokenEventView', description: 'The MCP token, never its value or its hash.' });

export function mcpTokenEventView(row: McpTokenRow): z.input<typeof McpTokenEventView> {
  const { id, name, token_prefix, scopes, environment, user_id, expires_at } = row;
  return { id, name, token_prefix, scopes, environment, user_id, expires_at: expires_at?.toISOString() ?? null };
}

export const MCP_TOKEN_EVENTS = {
  'mcp_token.created': event(
    'An MCP token was issued (`POST /v1/mcp/tokens`).',
    { mcp_token: McpTokenEventView },
    EMITTED,
  ),
  'mcp_token.revoked': event(
    'An MCP token was revoked (`DELETE /v1/mcp/tokens/{id}`); it stopped opening the MCP routes at once. Fires once per token.',
    { mcp_token: McpTokenEventView },
    EMITTED,
  ),
};
