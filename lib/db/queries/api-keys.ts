import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { PageWindow } from '../../pagination.ts';
import type { Tenant } from '../../tenancy.ts';
import { ENVIRONMENTS, KEY_TYPES, type KeyType, MEMBER_ROLES } from '../../vocabulary.ts';
import { olderThanCursor } from '../paging.ts';
import { sql } from '../sql.ts';

export const apiKeyRow = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  user_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  name: z.string(),
  description: z.string(),
  key_type: z.enum(KEY_TYPES),
  scopes: z.array(z.string()),
  is_active: z.boolean(),
  allowed_ips: z.array(z.string()),
  max_uses: z.number().int().nullable(),
  used_count: z.number().int(),
  last_used_at: z.date().nullable(),
  expires_at: z.date().nullable(),
  expired_at: z.date().nullable(),
  revoked_at: z.date().nullable(),
  revocation_reason: z.string().nullable(),
  created_at: z.date(),
  key_prefix: z.string(),
});
export type ApiKeyRow = z.infer<typeof apiKeyRow>;

const credentialRow = apiKeyRow.extend({
  secret_id: z.uuid(),
  secret_hash: z.instanceof(Buffer),
  secret_valid_until: z.date().nullable(),
  secret_retired_at: z.date().nullable(),
  workspace_name: z.string(),
  user_email: z.string(),
  user_role: z.enum(MEMBER_ROLES),
  /** A deactivated member's keys do not authenticate, revoked or not (SCIM deprovisioning). */
  user_active: z.boolean(),
});
export type CredentialRow = z.infer<typeof credentialRow>;

// The newest value's prefix is the one a key is known by.
const columns = sql.fragment`
  k.id, k.workspace_id, k.user_id, k.environment, k.name, k.description, k.key_type, k.scopes,
  k.is_active, k.allowed_ips, k.max_uses, k.used_count, k.last_used_at, k.expires_at, k.expired_at,
  k.revoked_at, k.revocation_reason, k.created_at,
  (SELECT s.key_prefix FROM api_key_secrets s WHERE s.api_key_id = k.id ORDER BY s.created_at DESC LIMIT 1) AS key_prefix
`;

export type NewApiKey = {
  workspaceId: string;
  userId: string;
  environment: Tenant['environment'];
  name: string;
  description: string;
  keyType: KeyType;
  scopes: string[];
  allowedIps: string[];
  maxUses: number | null;
  expiresAt: Date | null;
};

export type ApiKeyChanges = Partial<{
  name: string;
  description: string;
  isActive: boolean;
  allowedIps: string[];
  scopes: string[];
  maxUses: number | null;
}>;

export function createApiKeyQueries(db: CommonQueryMethods) {
  return {
    async insert(key: NewApiKey): Promise<string> {
      return db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
        INSERT INTO api_keys (workspace_id, user_id, environment, name, description, key_type, scopes,
                              allowed_ips, max_uses, expires_at)
        VALUES (${key.workspaceId}, ${key.userId}, ${key.environment}, ${key.name}, ${key.description},
                ${key.keyType}, ${sql.array(key.scopes, 'text')}, ${sql.array(key.allowedIps, 'text')},
                ${key.maxUses}, ${key.expiresAt ? sql.timestamp(key.expiresAt) : null})
        RETURNING id`);
    },

    async insertSecret(apiKeyId: string, hash: Buffer, keyPrefix: string): Promise<string> {
      return db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
        INSERT INTO api_key_secrets (api_key_id, secret_hash, key_prefix)
        VALUES (${apiKeyId}, ${sql.binary(hash)}, ${keyPrefix})
        RETURNING id`);
    },

    async find(tenant: Tenant, id: string): Promise<ApiKeyRow | null> {
      return db.maybeOne(sql.type(apiKeyRow)`
        SELECT ${columns} FROM api_keys k
        WHERE k.id = ${id} AND k.workspace_id = ${tenant.workspaceId} AND k.environment = ${tenant.environment}`);
    },

    /** By id alone: for workers acting on a key they were handed, never for requests. */
    async findById(id: string): Promise<ApiKeyRow | null> {
      return db.maybeOne(sql.type(apiKeyRow)`SELECT ${columns} FROM api_keys k WHERE k.id = ${id}`);
    },

    async findForUpdate(tenant: Tenant, id: string): Promise<ApiKeyRow | null> {
      return db.maybeOne(sql.type(apiKeyRow)`
        SELECT ${columns} FROM api_keys k
        WHERE k.id = ${id} AND k.workspace_id = ${tenant.workspaceId} AND k.environment = ${tenant.environment}
        FOR UPDATE OF k`);
    },

    async list(tenant: Tenant, window: PageWindow): Promise<readonly ApiKeyRow[]> {
      return db.any(sql.type(apiKeyRow)`
        SELECT ${columns} FROM api_keys k
        WHERE k.workspace_id = ${tenant.workspaceId} AND k.environment = ${tenant.environment}
          AND ${olderThanCursor(window, 'k')}
        ORDER BY k.created_at DESC, k.id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },

    async findCredential(hash: Buffer): Promise<CredentialRow | null> {
      return db.maybeOne(sql.type(credentialRow)`
        SELECT ${columns}, s.id AS secret_id, s.secret_hash, s.valid_until AS secret_valid_until,
               s.retired_at AS secret_retired_at,
               w.name AS workspace_name, u.email AS user_email, u.role AS user_role, u.active AS user_active
        FROM api_key_secrets s
          JOIN api_keys k ON k.id = s.api_key_id
          JOIN workspaces w ON w.id = k.workspace_id
          JOIN users u ON u.id = k.user_id AND u.workspace_id = k.workspace_id
        WHERE s.secret_hash = ${sql.binary(hash)}`);
    },

    /** Counts one use; null when the usage cap is already spent (atomic under concurrency). */
    async recordUse(id: string): Promise<number | null> {
      return db.maybeOneFirst(sql.type(z.object({ used_count: z.number().int() }))`
        UPDATE api_keys SET used_count = used_count + 1, last_used_at = ms_now()
        WHERE id = ${id} AND (max_uses IS NULL OR used_count < max_uses)
        RETURNING used_count`);
    },

    async update(id: string, changes: ApiKeyChanges): Promise<void> {
      const sets = [
        changes.name !== undefined && sql.fragment`name = ${changes.name}`,
        changes.description !== undefined && sql.fragment`description = ${changes.description}`,
        changes.isActive !== undefined && sql.fragment`is_active = ${changes.isActive}`,
        changes.allowedIps !== undefined && sql.fragment`allowed_ips = ${sql.array(changes.allowedIps, 'text')}`,
        changes.scopes !== undefined && sql.fragment`scopes = ${sql.array(changes.scopes, 'text')}`,
        changes.maxUses !== undefined && sql.fragment`max_uses = ${changes.maxUses}`,
      ].filter((s) => s !== false);
      if (sets.length === 0) return;
      await db.query(sql.typeAlias('void')`UPDATE api_keys SET ${sql.join(sets, sql.fragment`, `)} WHERE id = ${id}`);
    },

    async revoke(id: string, reason: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE api_keys SET revoked_at = ms_now(), revocation_reason = ${reason}, is_active = false
        WHERE id = ${id} AND revoked_at IS NULL`);
    },

    /** Starts the grace period of every current value of a key; returns the values touched. */
    async startGrace(apiKeyId: string, validUntil: Date): Promise<readonly string[]> {
      return db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
        UPDATE api_key_secrets SET valid_until = ${sql.timestamp(validUntil)}
        WHERE api_key_id = ${apiKeyId} AND valid_until IS NULL AND retired_at IS NULL
        RETURNING id`);
    },

    /** Ends a rotated value's grace period; true the first time only, so the event fires once. */
    async retireSecret(secretId: string): Promise<{ apiKeyId: string } | null> {
      return db.maybeOne(sql.type(z.object({ apiKeyId: z.uuid() }))`
        UPDATE api_key_secrets SET retired_at = ms_now()
        WHERE id = ${secretId} AND retired_at IS NULL AND valid_until IS NOT NULL
        RETURNING api_key_id AS "apiKeyId"`);
    },

    /** Marks a key expired once its time has come; the row only on the first call. */
    async markExpired(id: string): Promise<ApiKeyRow | null> {
      const marked = await db.maybeOneFirst(sql.type(z.object({ id: z.uuid() }))`
        UPDATE api_keys SET expired_at = ms_now()
        WHERE id = ${id} AND expired_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ms_now()
        RETURNING id`);
      if (!marked) return null;
      return db.one(sql.type(apiKeyRow)`SELECT ${columns} FROM api_keys k WHERE k.id = ${id}`);
    },
  };
}
