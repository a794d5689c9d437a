import type { CommonQueryMethods, DatabaseTransactionConnection } from 'slonik';
import { type ApiKeyRow, createApiKeyQueries } from '../db/queries/api-keys.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { apiError, notFound } from '../errors.ts';
import type { PageQuery } from '../pagination.ts';
import type { Services } from '../services.ts';
import { verifyMfaCode } from './mfa.ts';
import { type Caller, NEVER_SHOWN_AGAIN, presentApiKey, tenantOf } from './present.ts';
import { type KeyType, scopesBeyond, sensitiveScopesGranted } from './scopes.ts';
import { type Environment, generateKeyValue, hashKeyValue } from './values.ts';

export type CreateApiKeyInput = {
  name: string;
  description?: string | undefined;
  environment?: Environment | undefined;
  key_type: KeyType;
  scopes?: string[] | undefined;
  expires_in_days?: number | undefined;
  allowed_ips?: string[] | undefined;
  max_uses?: number | undefined;
  mfa_code?: string | undefined;
};

export type UpdateApiKeyInput = {
  name?: string | undefined;
  description?: string | undefined;
  is_active?: boolean | undefined;
  allowed_ips?: string[] | undefined;
  scopes?: string[] | undefined;
  max_uses?: number | null | undefined;
  mfa_code?: string | undefined;
};

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export async function createApiKey(services: Services, caller: Caller, input: CreateApiKeyInput) {
  const environment = input.environment ?? caller.environment;
  if (environment !== caller.environment) {
    throw apiError('validation_error', `A ${caller.environment} key can only create ${caller.environment} keys.`, {
      param: 'environment',
    });
  }
  const scopes = resolveScopes(input.key_type, input.scopes);
  await authoriseGrant(services, services.db, caller, input.key_type, scopes, input.mfa_code);
  const expiresAt = input.expires_in_days === undefined ? null : new Date(Date.now() + input.expires_in_days * DAY_MS);
  const { value, displayPrefix } = generateKeyValue(environment, input.key_type);

  const row = await services.db.transaction(async (tx) => {
    const keys = createApiKeyQueries(tx);
    const id = await keys.insert({
      workspaceId: caller.workspaceId,
      userId: caller.userId,
      environment,
      name: input.name,
      description: input.description ?? '',
      keyType: input.key_type,
      scopes,
      allowedIps: input.allowed_ips ?? [],
      maxUses: input.max_uses ?? null,
      expiresAt,
    });
    await keys.insertSecret(id, hashKeyValue(services.keys.apiKeyPepper, value), displayPrefix);
    const created = await mustFind(tx, caller, id);
    await createEventQueries(tx).record(tenantOf(caller), 'api_key.created', { api_key: eventView(created) });
    if (expiresAt) await services.lifecycle.scheduleExpiry(id, expiresAt);
    return created;
  });
  return { ...presentApiKey(row), key: value, warning: NEVER_SHOWN_AGAIN };
}

export async function listApiKeys(services: Services, caller: Caller, page: PageQuery) {
  const window = services.paginator.open('api_keys', {}, page);
  const rows = await createApiKeyQueries(services.db).list(tenantOf(caller), window);
  return services.paginator.close('api_keys', {}, page, rows, presentApiKey);
}

export async function getApiKey(services: Services, caller: Caller, id: string) {
  const row = await createApiKeyQueries(services.db).find(tenantOf(caller), id);
  if (!row) throw notFound('API key');
  return presentApiKey(row);
}

export async function updateApiKey(services: Services, caller: Caller, id: string, input: UpdateApiKeyInput) {
  const row = await services.db.transaction(async (tx) => {
    const keys = createApiKeyQueries(tx);
    const current = await keys.findForUpdate(tenantOf(caller), id);
    if (!current) throw notFound('API key');
    if (current.revoked_at) throw apiError('validation_error', 'A revoked key cannot be changed.', { param: 'id' });
    if (input.scopes !== undefined) {
      if (current.key_type === 'full') {
        throw apiError('validation_error', 'A full key holds every scope; create a restricted key to limit scopes.', {
          param: 'scopes',
        });
      }
      const added = input.scopes.filter((s) => !current.scopes.includes(s));
      await authoriseGrant(services, tx, caller, 'restricted', added, input.mfa_code);
    }
    await keys.update(id, {
      name: input.name,
      description: input.description,
      isActive: input.is_active,
      allowedIps: input.allowed_ips,
      scopes: input.scopes,
      maxUses: input.max_uses,
    });
    const updated = await mustFind(tx, caller, id);
    await createEventQueries(tx).record(tenantOf(caller), 'api_key.updated', {
      api_key: eventView(updated),
      changed: Object.keys(input).filter((k) => k !== 'mfa_code'),
    });
    return updated;
  });
  return presentApiKey(row);
}

export async function revokeApiKey(services: Services, caller: Caller, id: string, reason: string) {
  const row = await services.db.transaction(async (tx) => {
    const keys = createApiKeyQueries(tx);
    const current = await keys.findForUpdate(tenantOf(caller), id);
    if (!current) throw notFound('API key');
    if (current.revoked_at) return current;
    await keys.revoke(id, reason);
    const revoked = await mustFind(tx, caller, id);
    await createEventQueries(tx).record(tenantOf(caller), 'api_key.revoked', { api_key: eventView(revoked), reason });
    return revoked;
  });
  return { ...presentApiKey(row), revoked: true as const };
}

export async function rotateApiKey(
  services: Services,
  caller: Caller,
  id: string,
  input: { grace_period_hours?: number | undefined; mfa_code?: string | undefined },
) {
  const graceHours = input.grace_period_hours ?? services.config.apiKeys.rotationGraceHours;
  const result = await services.db.transaction(async (tx) => {
    const keys = createApiKeyQueries(tx);
    const current = await keys.findForUpdate(tenantOf(caller), id);
    if (!current) throw notFound('API key');
    if (current.revoked_at) throw apiError('validation_error', 'A revoked key cannot be rotated.', { param: 'id' });
    if (current.expires_at && current.expires_at.getTime() <= Date.now()) {
      throw apiError('validation_error', 'An expired key cannot be rotated.', { param: 'id' });
    }
    // Rotation mints a new value with the key's scopes: the same checks as creating it.
    await authoriseGrant(services, tx, caller, current.key_type, current.scopes, input.mfa_code);
    const validUntil = new Date(Date.now() + graceHours * HOUR_MS);
    const previous = await keys.startGrace(id, validUntil);
    const { value, displayPrefix } = generateKeyValue(current.environment, current.key_type);
    await keys.insertSecret(id, hashKeyValue(services.keys.apiKeyPepper, value), displayPrefix);
    for (const secretId of previous) await services.lifecycle.scheduleGraceEnd(secretId, validUntil);
    const rotated = await mustFind(tx, caller, id);
    await createEventQueries(tx).record(tenantOf(caller), 'api_key.rotated', {
      api_key: eventView(rotated),
      previous_key_valid_until: validUntil.toISOString(),
    });
    return { rotated, value, validUntil };
  });
  return {
    ...presentApiKey(result.rotated),
    key: result.value,
    warning: NEVER_SHOWN_AGAIN,
    previous_key_valid_until: result.validUntil,
  };
}

function resolveScopes(keyType: KeyType, scopes: string[] | undefined): string[] {
  if (keyType === 'full') {
    if (scopes !== undefined && !(scopes.length === 1 && scopes[0] === '*')) {
      throw apiError('validation_error', 'A full key holds every scope; send key_type "restricted" to limit scopes.', {
        param: 'scopes',
      });
    }
    return ['*'];
  }
  return [...new Set(scopes ?? ['transfers:read', 'transfers:write'])];
}

/** A key never grants more than its creator holds, and sensitive scopes need a fresh TOTP code. */
async function authoriseGrant(
  services: Services,
  db: CommonQueryMethods,
  caller: Caller,
  keyType: KeyType,
  scopes: readonly string[],
  mfaCode: string | undefined,
) {
  const beyond = scopesBeyond(caller, { keyType, scopes });
  if (beyond.length > 0) {
    throw apiError('scope_missing', `This key cannot grant scopes it does not hold: ${beyond.join(', ')}.`, {
      param: 'scopes',
    });
  }
  const sensitive = sensitiveScopesGranted(keyType, scopes);
  if (sensitive.length > 0) await verifyMfaCode(services, db, caller, mfaCode, sensitive);
}

async function mustFind(tx: DatabaseTransactionConnection, caller: Caller, id: string): Promise<ApiKeyRow> {
  const row = await createApiKeyQueries(tx).find(tenantOf(caller), id);
  if (!row) throw notFound('API key');
  return row;
}

/** What events say about a key: never its value or hash. */
function eventView(row: ApiKeyRow) {
  const { id, name, key_prefix, key_type, scopes, environment } = row;
  return { id, name, key_prefix, key_type, scopes, environment };
}
