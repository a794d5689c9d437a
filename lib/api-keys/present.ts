import type { ApiKeyRow } from '../db/queries/api-keys.ts';
import type { Environment, KeyType, MemberRole } from '../vocabulary.ts';

/** Who is calling: resolved from the bearer key by the auth scheme. */
export type Caller = {
  workspaceId: string;
  environment: Environment;
  userId: string;
  apiKeyId: string;
  keyType: KeyType;
  scopes: string[];
  /**
   * The workspace's name and the user's email and role, read with the key (and cached with it,
   * forgotten on the same notice: migration 0024) so that GET /v1/me needs no query of its own.
   */
  profile?: CallerProfile;
};

export type CallerProfile = { workspaceName: string; userEmail: string; userRole: MemberRole };

/** The workspace and environment a caller's queries are confined to. */
export const tenantOf = (caller: Caller) => ({ workspaceId: caller.workspaceId, environment: caller.environment });

export const NEVER_SHOWN_AGAIN =
  'This is the only time the full key is shown. Store it in a secret manager now; Valise keeps only a hash.';

export function presentApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    object: 'api_key' as const,
    name: row.name,
    description: row.description,
    key_prefix: row.key_prefix,
    key_type: row.key_type,
    scopes: row.scopes,
    environment: row.environment,
    is_active: row.is_active && row.revoked_at === null,
    allowed_ips: row.allowed_ips,
    max_uses: row.max_uses,
    used_count: row.used_count,
    last_used_at: row.last_used_at,
    expires_at: row.expires_at,
    created_at: row.created_at,
    revoked_at: row.revoked_at,
    revocation_reason: row.revocation_reason,
  };
}

export type PresentedApiKey = ReturnType<typeof presentApiKey>;
