import { bearerValue } from '../api-keys/bearer.ts';
import { verifyMfaCode } from '../api-keys/mfa.ts';
import { hashKeyValue, sameHash } from '../api-keys/values.ts';
import { randomBase62 } from '../crypto/secrets.ts';
import { createScimQueries, type ScimTokenRow } from '../db/queries/scim.ts';
import { DomainError, notFound } from '../errors.ts';
import type { Services } from '../services.ts';
import { type Caller, type Tenant, tenantOf } from '../tenancy.ts';

// SCIM tokens (docs/scim.md, "Tokens"): the bearer an identity provider sends to /v1/scim. Each
// opens the SCIM resource routes of its workspace and nothing else; API keys do not open them.
// A token is kept as a keyed hash of its whole value (the API keys' pepper: the `scim_` prefix
// keeps the two kinds of value apart) and compared in constant time.

const TOKEN_PREFIX = 'scim_';
const SECRET_LENGTH = 48;
const TOKEN_PATTERN = new RegExp(`^${TOKEN_PREFIX}[0-9A-Za-z]{${SECRET_LENGTH}}$`);

/** Who calls a SCIM route: the token's tenant (members and groups are the workspace's). */
export type ScimCaller = Tenant & { tokenId: string };

export type CreateScimTokenInput = { name?: string | undefined; mfa_code?: string | undefined };

export function presentScimToken(row: ScimTokenRow) {
  return {
    id: row.id,
    object: 'scim_token' as const,
    name: row.name,
    token_prefix: row.token_prefix,
    environment: row.environment,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}

/**
 * Issues a token; its value is in the answer once. A token provisions and deprovisions the
 * workspace's members, who are shared by every environment: only a live key may create one, with
 * a verification code as for a key granting a sensitive scope.
 */
export async function createScimToken(services: Services, caller: Caller, input: CreateScimTokenInput) {
  if (caller.environment !== 'live') {
    throw new DomainError(
      'forbidden',
      "SCIM tokens are created with a live key: they manage the workspace's members, whom every environment shares.",
    );
  }
  await verifyMfaCode(services, caller, input.mfa_code, {
    sensitiveScopes: ['api_keys:manage'],
    reason: "to create a SCIM token, which creates and deactivates the workspace's members",
  });
  const value = TOKEN_PREFIX + randomBase62(SECRET_LENGTH);
  const row = await createScimQueries(services.db).insertToken(
    tenantOf(caller),
    input.name ?? '',
    hashKeyValue(services.keys.apiKeyPepper, value),
    value.slice(0, TOKEN_PREFIX.length + 6),
    caller.userId,
  );
  return { ...presentScimToken(row), token: value };
}

export async function listScimTokens(services: Services, caller: Caller) {
  const rows = await createScimQueries(services.db).listTokens(tenantOf(caller));
  return {
    object: 'list' as const,
    data: rows.map(presentScimToken),
    has_more: false,
    next_cursor: null,
    limit: rows.length,
    offset: null,
  };
}

export async function revokeScimToken(services: Services, caller: Caller, id: string) {
  const row = await createScimQueries(services.db).revokeToken(tenantOf(caller), id);
  if (!row) throw notFound('SCIM token');
  return { ...presentScimToken(row), revoked: true as const };
}

/**
 * Resolves a SCIM request's bearer token, or throws: `missing_api_key` without one,
 * `invalid_api_key` for an unknown value, `revoked_api_key` for a revoked token.
 */
export async function authenticateScimToken(services: Services, header: string | undefined): Promise<ScimCaller> {
  const value = bearerValue(header, { name: 'SCIM token', placeholder: '<SCIM_TOKEN>' });
  if (!TOKEN_PATTERN.test(value)) throw new DomainError('invalid_api_key', 'The SCIM token is not valid.');
  const hash = hashKeyValue(services.keys.apiKeyPepper, value);
  const queries = createScimQueries(services.db);
  const token = await queries.findTokenByHash(hash);
  if (!token || !sameHash(token.token_hash, hash)) {
    throw new DomainError('invalid_api_key', 'The SCIM token is not valid.');
  }
  if (token.revoked_at) throw new DomainError('revoked_api_key', 'This SCIM token has been revoked.');
  await queries.touchToken(token.id);
  return { workspaceId: token.workspace_id, environment: token.environment, tokenId: token.id };
}
