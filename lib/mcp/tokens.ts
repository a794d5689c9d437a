import { bearerValue } from '../api-keys/bearer.ts';
import { authoriseGrant } from '../api-keys/service.ts';
import { hashKeyValue, sameHash } from '../api-keys/values.ts';
import { randomBase62 } from '../crypto/secrets.ts';
import { createAuditQueries } from '../db/queries/audit.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { createMcpTokenQueries, type McpTokenRow } from '../db/queries/mcp-tokens.ts';
import { DomainError, notFound } from '../errors.ts';
import { mcpTokenEventView } from '../events/mcp-token-events.ts';
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
  const tenant = tenantOf(caller);
  const row = await services.db.transaction(async (tx) => {
    const created = await createMcpTokenQueries(tx).insert(tenant, {
      name: input.name ?? '',
      hash: hashKeyValue(services.keys.apiKeyPepper, value),
      // What lists show: enough to recognise a token, far too little to use it.
      prefix: value.slice(0, TOKEN_PREFIX.length + 6),
      scopes,
      userId: caller.userId,
      issuedByApiKeyId: caller.apiKeyId,
      expiresAt: input.expires_in_days === undefined ? null : new Date(Date.now() + input.expires_in_days * DAY_MS),
    });
    await createEventQueries(tx).record(tenant, 'mcp_token.created', { mcp_token: mcpTokenEventView(created) });
    return created;
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
  const tenant = tenantOf(caller);
  const row = await services.db.transaction(async (tx) => {
    const revoked = await createMcpTokenQueries(tx).revoke(tenant, id);
    if (!revoked) throw notFound('MCP token');
    if (revoked.newly) {
      await createEventQueries(tx).record(tenant, 'mcp_token.revoked', { mcp_token: mcpTokenEventView(revoked) });
    }
    return revoked;
  });
  return { ...presentMcpToken(row), revoked: true as const };
}

/**
 * Resolves an MCP token to its caller, or throws the spec's refusal: `missing_api_key` without a
 * bearer, `invalid_api_key` for an unknown value, `revoked_api_key` for a revoked token (or one whose
 * member was deactivated), `expired_api_key` past its expiry.
 */
export async function authenticateMcpToken(
  services: Services,
  header: string | undefined,
  origin: TokenOrigin,
): Promise<McpCaller> {
  const value = bearerValue(header, { name: 'MCP token', placeholder: '<MCP_TOKEN>' });
  if (!TOKEN_PATTERN.test(value)) throw new DomainError('invalid_api_key', 'The MCP token is not valid.');
  const hash = hashKeyValue(services.keys.apiKeyPepper, value);
  const queries = createMcpTokenQueries(services.db);
  const token = await queries.findByHash(hash);
  if (!token || !sameHash(token.token_hash, hash)) {
    throw new DomainError('invalid_api_key', 'The MCP token is not valid.');
  }
  const fail = async (reason: string, error: DomainError) => {
    await auditFailure(services, token, origin, reason);
    return error;
  };
  if (token.revoked_at)
    throw await fail('revoked', new DomainError('revoked_api_key', 'This MCP token has been revoked.'));
  if (!token.user_active) {
    throw await fail(
      'member_inactive',
      new DomainError('revoked_api_key', 'The member this MCP token acts for has been deactivated.'),
    );
  }
  if (token.expires_at && token.expires_at.getTime() <= Date.now()) {
    throw await fail('expired', new DomainError('expired_api_key', 'This MCP token has expired.'));
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

/** Where a request with a token comes from, for the audit of its failures. */
export type TokenOrigin = { ip: string; userAgent: string | null; requestId: string };

/**
 * A known token refused (revoked, expired, its member deactivated) writes `auth.failed`, as a known
 * API key does (docs/api-keys.md): collapsed to one entry per token, reason, address and hour.
 */
async function auditFailure(services: Services, token: McpTokenRow, origin: TokenOrigin, reason: string) {
  const at = new Date();
  await createAuditQueries(services.db).insertCollapsed(
    {
      workspaceId: token.workspace_id,
      environment: token.environment,
      actorId: token.user_id,
      apiKeyId: token.issued_by_api_key_id,
      action: 'auth.failed',
      resourceType: 'mcp_token',
      resourceId: token.id,
      ipAddress: origin.ip,
      userAgent: origin.userAgent?.slice(0, 512) ?? null,
      status: 'failure',
      requestId: origin.requestId,
      metadata: { reason },
    },
    JSON.stringify(['auth.failed', token.id, reason, origin.ip, at.toISOString().slice(0, 13)]),
    at,
  );
}
