import type { ApiKeyRow } from '../db/queries/api-keys.ts';

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
