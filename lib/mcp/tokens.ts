import { bearerValue } from '../api-keys/bearer.ts';
import { authoriseGrant } from '../api-keys/service.ts';
import { hashKeyValue, sameHash } from '../api-keys/values.ts';
import { randomBase62 } from '../crypto/secrets.ts';
import { createMcpTokenQueries, type McpTokenRow } from '../db/queries/mcp-tokens.ts';
import { DomainError, notFound } from '../errors.ts';
import type { PageQuery } from '../pagination.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';

// MCP tokens (docs/mcp.md, "Tokens"): the bearer an MCP client sends to its workspace's hosted
// endpoint. A token is issued by an API key, in that key's workspace and environment, for the member
// owning the key, with scopes that key holds (granting a sensitive one needs a verification code, as
// for a key: the same authoriseGrant). It opens the MCP routes and nothing else: its value does not
// have an API key's shape, so every other route refuses it as an unknown key. Kept as a keyed hash of
// the whole value (the API keys' pepper; the `svc_mcp_` prefix keeps the kinds of value apart),
// compared in constant time.

const TOKEN_PREFIX = 'svc_mcp_';
const SECRET_LENGTH = 40;
const TOKEN_PATTERN = new RegExp(`^${TOKEN_PREFIX}[0-9A-Za-z]{${SECRET_LENGTH}}$`);
const DAY_MS = 86_400_000;

export const MCP_TOKEN_NEVER_SHOWN_AGAIN =
  'This is the only time the MCP token is shown. Put it in your MCP client now; Valise keeps only a hash.';

/** Whether a bearer value has the shape of an MCP token (the control endpoint takes keys as well). */
export function looksLikeMcpToken(value: string): boolean {
  return value.startsWith(TOKEN_PREFIX);
}

/**
 * Who calls with an MCP token: the caller its tools run as (the token's workspace, environment and
 * scopes, the member it acts for and the key that issued it), and the token itself.
 */
export type McpCaller = { caller: Caller; tokenId: string };

export type CreateMcpTokenInput = {
  name?: string | undefined;
  scopes: string[];
  expires_in_days?: number | undefined;
  mfa_code?: string | undefined;
};

export function presentMcpToken(row: McpTokenRow, now = Date.now()) {
  return {
    id: row.id,
    object: 'mcp_token' as const,
    name: row.name,
    token_prefix: row.token_prefix,
    scopes: row.scopes,
    environment: row.environment,
    is_active: row.revoked_at === null && (row.expires_at === null || row.expires_at.getTime() > now),
    expires_at: row.expires_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
    created_at: row.created_at,
  };
}

/** Issues a token; its value is in the answer once. */
export async function createMcpToken(services: Services, caller: Caller, input: CreateMcpTokenInput) {
  const scopes = [...new Set(input.scopes)];
  await authoriseGrant(services, caller, 'restricted', scopes, input.mfa_code);
  const value = TOKEN_PREFIX + randomBase62(SECRET_LENGTH);
  const row = await createMcpTokenQueries(services.db).insert(tenantOf(caller), {
    name: input.name ?? '',
    hash: hashKeyValue(services.keys.apiKeyPepper, value),
    // What lists show: enough to recognise a token, far too little to use it.
    prefix: value.slice(0, TOKEN_PREFIX.length + 6),
    scopes,
    userId: caller.userId,
    issuedByApiKeyId: caller.apiKeyId,
    expiresAt: input.expires_in_days === undefined ? null : new Date(Date.now() + input.expires_in_days * DAY_MS),
  });
  return { ...presentMcpToken(row), token: value, warning: MCP_TOKEN_NEVER_SHOWN_AGAIN };
}

export async function listMcpTokens(services: Services, caller: Caller, page: PageQuery) {
  const window = services.paginator.open('mcp_tokens', {}, page);
  const rows = await createMcpTokenQueries(services.db).list(tenantOf(caller), window);
  const now = Date.now();
  return services.paginator.close('mcp_tokens', {}, page, rows, (row) => presentMcpToken(row, now));
}

/** Revokes a token: it stops opening the MCP routes at once. Revoking a revoked token changes nothing. */
export async function revokeMcpToken(services: Services, caller: Caller, id: string) {
  const row = await createMcpTokenQueries(services.db).revoke(tenantOf(caller), id);
  if (!row) throw notFound('MCP token');
  return { ...presentMcpToken(row), revoked: true as const };
}

/**
 * Resolves an MCP token to its caller, or throws the spec's refusal: `missing_api_key` without a
 * bearer, `invalid_api_key` for an unknown value, `revoked_api_key` for a revoked token (or one whose
 * member was deactivated), `expired_api_key` past its expiry.
 */
export async function authenticateMcpToken(services: Services, header: string | undefined): Promise<McpCaller> {
  const value = bearerValue(header, { name: 'MCP token', placeholder: '<MCP_TOKEN>' });
  return authenticateMcpTokenValue(services, value);
}

export async function authenticateMcpTokenValue(services: Services, value: string): Promise<McpCaller> {
  if (!TOKEN_PATTERN.test(value)) throw new DomainError('invalid_api_key', 'The MCP token is not valid.');
  const hash = hashKeyValue(services.keys.apiKeyPepper, value);
  const queries = createMcpTokenQueries(services.db);
  const token = await queries.findByHash(hash);
  if (!token || !sameHash(token.token_hash, hash)) {
    throw new DomainError('invalid_api_key', 'The MCP token is not valid.');
  }
  if (token.revoked_at) throw new DomainError('revoked_api_key', 'This MCP token has been revoked.');
  if (!token.user_active) {
    throw new DomainError('revoked_api_key', 'The member this MCP token acts for has been deactivated.');
  }
  if (token.expires_at && token.expires_at.getTime() <= Date.now()) {
    throw new DomainError('expired_api_key', 'This MCP token has expired.');
  }
  await queries.touch(token.id);
  return {
    tokenId: token.id,
    caller: {
      workspaceId: token.workspace_id,
      environment: token.environment,
      userId: token.user_id,
      apiKeyId: token.issued_by_api_key_id,
      keyType: 'restricted',
      scopes: token.scopes,
    },
  };
}
