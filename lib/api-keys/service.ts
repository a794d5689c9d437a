import type { DatabaseTransactionConnection } from 'slonik';
import { type ApiKeyRow, createApiKeyQueries } from '../db/queries/api-keys.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { DomainError, notFound } from '../errors.ts';
import { API_KEY_UPDATABLE } from '../events/api-key-events.ts';
import { apiKeyEventView } from '../events/views.ts';
import type { PageQuery } from '../pagination.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';
import { type Environment, isOneOf, type KeyType, type RevocationReason } from '../vocabulary.ts';
import { isStronger, loosenedFields } from './loosening.ts';
import { type MfaNeed, mfaRequired, verifyMfaCode } from './mfa.ts';
import { NEVER_SHOWN_AGAIN, presentApiKey } from './present.ts';
import { DEFAULT_SCOPES, scopesBeyond, sensitiveScopesGranted } from './scopes.ts';
import { generateKeyValue, hashKeyValue, mintableEnvironments } from './values.ts';

export type CreateApiKeyInput = {
  name: string;
  description?: string | undefined;
  environment?: Environment | undefined;
  key_type?: KeyType | undefined;
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
  // The spec's default is `live`; a test or sandbox key may not mint live keys, so the default is the caller's
  // own environment (live for a live key, as the spec says).
  const { environment = caller.environment, mfa_code, ...key } = input;
  if (!mintableEnvironments(caller.environment).includes(environment)) {
    throw new DomainError(
      'forbidden',
      `A ${caller.environment} key cannot create ${environment} keys; it creates ${mintableEnvironments(caller.environment).join(' and ')} keys.`,
      { param: 'environment' },
    );
  }
  const key_type = input.key_type ?? impliedKeyType(input.scopes);
  const scopes = resolveScopes(key_type, input.scopes);
  await authoriseGrant(services, caller, key_type, scopes, mfa_code);
  return issueApiKey(
    services,
    { workspaceId: caller.workspaceId, userId: caller.userId, environment },
    {
      ...key,
      key_type,
      scopes,
    },
  );
}

/**
 * The spec defaults `key_type` to `full` and lists `scopes` among the optional fields: a client that sends a scope
 * list alone means a key limited to it, never a full key that refuses the list. Only `["*"]`, what a full key
 * reads, keeps the default.
 */
export function impliedKeyType(scopes: readonly string[] | undefined): KeyType {
  return scopes === undefined || (scopes.length === 1 && scopes[0] === '*') ? 'full' : 'restricted';
}

export type KeyOwner = { workspaceId: string; userId: string; environment: Environment };

export type IssueApiKeyInput = Omit<CreateApiKeyInput, 'environment' | 'mfa_code' | 'key_type' | 'scopes'> & {
  key_type: KeyType;
  scopes: string[];
};

/**
 * Mints a key for `owner` in `owner.environment`, with scopes already resolved: no authorisation, no
 * MFA. The route reaches it only through createApiKey; tests use it to build fixtures.
 */
export async function issueApiKey(services: Services, owner: KeyOwner, input: IssueApiKeyInput) {
  const tenant = { workspaceId: owner.workspaceId, environment: owner.environment };
  const expiresAt = input.expires_in_days === undefined ? null : new Date(Date.now() + input.expires_in_days * DAY_MS);
  const { value, displayPrefix } = generateKeyValue(owner.environment, input.key_type);

  const row = await services.db.transaction(async (tx) => {
    const keys = createApiKeyQueries(tx);
    const id = await keys.insert({
      workspaceId: owner.workspaceId,
      userId: owner.userId,
      environment: owner.environment,
      name: input.name,
      description: input.description ?? '',
      keyType: input.key_type,
      scopes: input.scopes,
      allowedIps: input.allowed_ips ?? [],
      maxUses: input.max_uses ?? null,
      expiresAt,
    });
    await keys.insertSecret(id, hashKeyValue(services.keys.apiKeyPepper, value), displayPrefix);
    const created = await keys.find(tenant, id);
    if (!created) throw notFound('API key');
    // The event belongs to the environment of the key it describes (webhooks and GET /v1/events there).
    await createEventQueries(tx).record(tenant, 'api_key.created', { api_key: apiKeyEventView(created) });
    if (expiresAt) await services.workflows.apiKeys.scheduleExpiry(tenant, id, expiresAt);
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
  const need = await checkBeforeTransaction(services, caller, id, input.mfa_code, (key) =>
    updateNeed(caller, key, input),
  );
  const row = await services.db.transaction(async (tx) => {
    const keys = createApiKeyQueries(tx);
    const current = await keys.findForUpdate(tenantOf(caller), id);
    if (!current) throw notFound('API key');
    recheckInTransaction(need, updateNeed(caller, current, input));
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
      api_key: apiKeyEventView(updated),
      changed: Object.keys(input).filter((key) => isOneOf(API_KEY_UPDATABLE, key)),
    });
    return updated;
  });
  // This process stops using the old credentials now; the others when the change's notice reaches them.
  services.credentials.forget();
  return presentApiKey(row);
}

/**
 * Refuses what the caller may not do to `current` at all, and returns the verification code the change needs
 * (null when none): granting a sensitive scope, or loosening a key stronger than the caller (docs/api-keys.md,
 * "Stronger keys"). Tightening is always free.
 */
function updateNeed(caller: Caller, current: ApiKeyRow, input: UpdateApiKeyInput): MfaNeed | null {
  if (current.revoked_at)
    throw new DomainError('validation_error', 'A revoked key cannot be changed.', { param: 'id' });
  if (input.scopes !== undefined && current.key_type === 'full') {
    throw new DomainError(
      'validation_error',
      'A full key holds every scope; create a restricted key to limit scopes.',
      {
        param: 'scopes',
      },
    );
  }
  const added = (input.scopes ?? []).filter((s) => !current.scopes.includes(s));
  refuseScopesBeyond(caller, 'restricted', added);
  const loosened = isStronger(caller, { keyType: current.key_type, scopes: current.scopes })
    ? loosenedFields(current, { ...input, addedScopes: added })
    : [];
  if (loosened.length > 0) {
    return {
      sensitiveScopes: sensitiveScopesGranted(current.key_type, [...current.scopes, ...added]),
      reason: `to loosen (${loosened.join(', ')}) a key holding scopes this key lacks`,
    };
  }
  const sensitive = sensitiveScopesGranted('restricted', added);
  return sensitive.length > 0 ? grantNeed(sensitive) : null;
}

export async function revokeApiKey(services: Services, caller: Caller, id: string, reason: RevocationReason) {
  const row = await services.db.transaction(async (tx) => {
    const keys = createApiKeyQueries(tx);
    const current = await keys.findForUpdate(tenantOf(caller), id);
    if (!current) throw notFound('API key');
    if (current.revoked_at) return current;
    await keys.revoke(id, reason);
    const revoked = await mustFind(tx, caller, id);
    await createEventQueries(tx).record(tenantOf(caller), 'api_key.revoked', {
      api_key: apiKeyEventView(revoked),
      reason,
    });
    return revoked;
  });
  services.credentials.forget();
  return { ...presentApiKey(row), revoked: true as const };
}

export type RotateApiKeyInput = { grace_period_hours?: number | undefined; mfa_code?: string | undefined };

export async function rotateApiKey(services: Services, caller: Caller, id: string, input: RotateApiKeyInput) {
  const graceHours = input.grace_period_hours ?? services.config.apiKeys.rotationGraceHours;
  const need = await checkBeforeTransaction(services, caller, id, input.mfa_code, (key) => rotateNeed(caller, key));
  const result = await services.db.transaction(async (tx) => {
    const keys = createApiKeyQueries(tx);
    const current = await keys.findForUpdate(tenantOf(caller), id);
    if (!current) throw notFound('API key');
    recheckInTransaction(need, rotateNeed(caller, current));
    const validUntil = new Date(Date.now() + graceHours * HOUR_MS);
    const previous = await keys.startGrace(id, validUntil);
    const { value, displayPrefix } = generateKeyValue(current.environment, current.key_type);
    await keys.insertSecret(id, hashKeyValue(services.keys.apiKeyPepper, value), displayPrefix);
    for (const secretId of previous) {
      await services.workflows.apiKeys.scheduleGraceEnd(tenantOf(caller), secretId, validUntil);
    }
    const rotated = await mustFind(tx, caller, id);
    await createEventQueries(tx).record(tenantOf(caller), 'api_key.rotated', {
      api_key: apiKeyEventView(rotated),
      previous_key_valid_until: validUntil.toISOString(),
    });
    return { rotated, value, validUntil };
  });
  services.credentials.forget();
  return {
    ...presentApiKey(result.rotated),
    key: result.value,
    warning: NEVER_SHOWN_AGAIN,
    previous_key_valid_until: result.validUntil,
  };
}

/**
 * Rotation mints a new value with the key's scopes: the same checks as creating it. A key stronger than the
 * caller is refused outright (scope_missing), code or not: the caller would receive its value.
 */
function rotateNeed(caller: Caller, current: ApiKeyRow): MfaNeed | null {
  if (current.revoked_at)
    throw new DomainError('validation_error', 'A revoked key cannot be rotated.', { param: 'id' });
  if (current.expires_at && current.expires_at.getTime() <= Date.now()) {
    throw new DomainError('validation_error', 'An expired key cannot be rotated.', { param: 'id' });
  }
  refuseScopesBeyond(caller, current.key_type, current.scopes);
  const sensitive = sensitiveScopesGranted(current.key_type, current.scopes);
  return sensitive.length > 0 ? grantNeed(sensitive) : null;
}

/**
 * Checks a change against the key as it is and verifies the code it needs, before the change's transaction:
 * a wrong code's count and a spent code must outlive that transaction's rollback, and slonik lets no other
 * connection run inside it. The transaction checks again on the locked row (recheckInTransaction).
 */
async function checkBeforeTransaction(
  services: Services,
  caller: Caller,
  id: string,
  mfaCode: string | undefined,
  check: (key: ApiKeyRow) => MfaNeed | null,
): Promise<MfaNeed | null> {
  const key = await createApiKeyQueries(services.db).find(tenantOf(caller), id);
  if (!key) throw notFound('API key');
  const need = check(key);
  if (need) await verifyMfaCode(services, caller, mfaCode, need);
  return need;
}

/** The key changed between the check and the lock so that it now needs a code no one checked: refuse. */
function recheckInTransaction(verified: MfaNeed | null, now: MfaNeed | null) {
  if (now && !verified) throw mfaRequired('A verification code is required', now);
}

export function resolveScopes(keyType: KeyType, scopes: string[] | undefined): string[] {
  if (keyType === 'full') {
    if (scopes !== undefined && !(scopes.length === 1 && scopes[0] === '*')) {
      throw new DomainError(
        'validation_error',
        'A full key holds every scope; send key_type "restricted" to limit scopes.',
        {
          param: 'scopes',
        },
      );
    }
    return ['*'];
  }
  return [...new Set(scopes ?? DEFAULT_SCOPES)];
}

/**
 * A key never grants more than its creator holds, and sensitive scopes need a fresh TOTP code: the
 * same rule for anything a key mints with scopes (an API key, an MCP token, docs/mcp.md).
 */
export async function authoriseGrant(
  services: Services,
  caller: Caller,
  keyType: KeyType,
  scopes: readonly string[],
  mfaCode: string | undefined,
) {
  refuseScopesBeyond(caller, keyType, scopes);
  const sensitive = sensitiveScopesGranted(keyType, scopes);
  if (sensitive.length > 0) await verifyMfaCode(services, caller, mfaCode, grantNeed(sensitive));
}

function refuseScopesBeyond(caller: Caller, keyType: KeyType, scopes: readonly string[]) {
  const beyond = scopesBeyond(caller, { keyType, scopes });
  if (beyond.length > 0) {
    throw new DomainError('scope_missing', `This key cannot grant scopes it does not hold: ${beyond.join(', ')}.`, {
      param: 'scopes',
    });
  }
}

const grantNeed = (sensitive: readonly string[]): MfaNeed => ({
  sensitiveScopes: sensitive,
  reason: `to grant sensitive scopes: ${sensitive.join(', ')}`,
});

async function mustFind(tx: DatabaseTransactionConnection, caller: Caller, id: string): Promise<ApiKeyRow> {
  const row = await createApiKeyQueries(tx).find(tenantOf(caller), id);
  if (!row) throw notFound('API key');
  return row;
}

/** What events say about a key: never its value or hash. */
