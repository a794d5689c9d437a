import { type CredentialRow, createApiKeyQueries } from '../db/queries/api-keys.ts';
import { createAuditQueries } from '../db/queries/audit.ts';
import { DomainError } from '../errors.ts';
import { ipAllowed } from '../net/ip-allow-list.ts';
import type { Services } from '../services.ts';
import type { Caller } from '../tenancy.ts';
import { bearerValue } from './bearer.ts';
import { hashKeyValue, parseKeyValue, sameHash } from './values.ts';

export type RequestOrigin = {
  ip: string;
  userAgent: string | null;
  requestId: string;
  /**
   * Called (at most once) before this request costs the database anything: a key lookup the
   * credential cache cannot answer, an audit entry, a usage cap's count. The caller checks its
   * address's budget of failed authentications there and throws to refuse. A request answered
   * from the cache alone never calls it: the caller checks the budget afterwards.
   */
  beforeDatabase: () => Promise<void>;
};

/** Usage caps never reset: a client should stop, not retry soon. */
const USAGE_CAP_RETRY_AFTER_SECONDS = 86_400;

/**
 * Resolves an Authorization header to its caller, or throws the spec's error.
 * Failures on a key we know are written to that workspace's audit log
 * (collapsed, see auditFailure). The per-address budget of failures is
 * api/auth.ts's: it is checked before this function runs.
 */
export async function authenticate(
  services: Services,
  header: string | undefined,
  origin: RequestOrigin,
): Promise<Caller> {
  const value = bearerValue(header, { name: 'API key', placeholder: '<API_KEY>' });
  const claimed = parseKeyValue(value);
  if (!claimed) throw new DomainError('invalid_api_key', 'The API key is malformed.');

  const hash = hashKeyValue(services.keys.apiKeyPepper, value);
  const keys = createApiKeyQueries(services.db);
  const key = await findCredential(services, hash, origin.beforeDatabase);
  // The hash covers the whole value, prefix included; the checks below are
  // defence in depth against a row that does not match what was presented.
  if (!key || !sameHash(key.secret_hash, hash) || key.environment !== claimed.environment) {
    throw new DomainError('invalid_api_key', 'The API key is not valid.');
  }

  const now = Date.now();
  const fail = async (reason: string, error: Error) => {
    await origin.beforeDatabase();
    await auditFailure(services, key, origin, reason);
    return error;
  };
  if (key.revoked_at) throw await fail('revoked', new DomainError('revoked_api_key', 'This API key has been revoked.'));
  if (!key.is_active) throw await fail('inactive', new DomainError('revoked_api_key', 'This API key is inactive.'));
  if (!key.user_active) {
    throw await fail(
      'member_inactive',
      new DomainError('revoked_api_key', 'The member this API key belongs to has been deactivated.'),
    );
  }
  if (key.expires_at && key.expires_at.getTime() <= now) {
    throw await fail('expired', new DomainError('expired_api_key', 'This API key has expired.'));
  }
  if (key.secret_retired_at || (key.secret_valid_until && key.secret_valid_until.getTime() <= now)) {
    throw await fail(
      'rotated',
      new DomainError(
        'expired_api_key',
        'This key value was rotated and its grace period has ended. Use the new value.',
      ),
    );
  }
  if (!ipAllowed(key.allowed_ips, origin.ip)) {
    throw await fail(
      'ip_not_allowed',
      new DomainError('ip_not_allowed', `Requests from ${origin.ip} are not allowed for this key.`),
    );
  }
  if (key.max_uses === null) {
    services.usage.record(key.id);
  } else {
    await origin.beforeDatabase();
    if ((await keys.recordUse(key.id)) === null) {
      throw await fail(
        'usage_cap',
        new DomainError('rate_limited', `This key has reached its usage cap of ${key.max_uses} requests.`, {
          retryAfterSeconds: USAGE_CAP_RETRY_AFTER_SECONDS,
        }),
      );
    }
  }

  return {
    workspaceId: key.workspace_id,
    environment: key.environment,
    userId: key.user_id,
    apiKeyId: key.id,
    keyType: key.key_type,
    scopes: key.scopes,
    profile: { workspaceName: key.workspace_name, userEmail: key.user_email, userRole: key.user_role },
  };
}

/** The key a value's hash names: from the credential cache when it holds it, else from the database. */
async function findCredential(
  services: Services,
  hash: Buffer,
  beforeDatabase: () => Promise<void>,
): Promise<CredentialRow | null> {
  const cached = services.credentials.get(hash);
  if (cached) return cached;
  await beforeDatabase();
  const ticket = services.credentials.ticket();
  const found = await createApiKeyQueries(services.db).findCredential(hash);
  if (found) services.credentials.store(hash, found, ticket);
  return found;
}

/**
 * Failures are collapsed: one `auth.failed` entry per key, reason, client
 * address and clock hour, its `metadata.count` adding up the occurrences, so
 * a flood of failures on a known key cannot flood the audit log.
 */
async function auditFailure(services: Services, key: CredentialRow, origin: RequestOrigin, reason: string) {
  const at = new Date();
  const hour = at.toISOString().slice(0, 13);
  await createAuditQueries(services.db).insertCollapsed(
    {
      workspaceId: key.workspace_id,
      environment: key.environment,
      actorId: key.user_id,
      apiKeyId: key.id,
      action: 'auth.failed',
      resourceType: 'api_key',
      resourceId: key.id,
      ipAddress: origin.ip,
      userAgent: origin.userAgent?.slice(0, 512) ?? null,
      status: 'failure',
      requestId: origin.requestId,
      metadata: { reason },
    },
    JSON.stringify(['auth.failed', key.id, reason, origin.ip, hour]),
    at,
  );
}
