import type { KeyType } from '../vocabulary.ts';

// The scope catalog. Scopes read `resource:action`; `*` satisfies anything.
// docs/api-keys.md explains each one and which routes require it.
export const SCOPES = [
  'transfers:read',
  'transfers:write',
  'transfers:manage',
  'folders:manage',
  'collections:read',
  'collections:write',
  'collections:manage',
  'coffres:read',
  'coffres:write',
  'coffres:manage',
  'intake:read',
  'intake:write',
  'intake_read',
  'recipients:read',
  'recipients:write',
  'webhooks:read',
  'webhooks:manage',
  'api_keys:manage',
  'audit:read',
  'audit:export',
  'analytics:read',
  'gdpr:export',
  'billing:read',
  'mcp:manage',
  'members:manage',
  'sessions:manage',
  'domains:manage',
  'workspace:manage',
  'workspace:billing',
  '*',
] as const;

export type Scope = (typeof SCOPES)[number];

/** Granting any of these needs a TOTP code from the key's owner. */
export const SENSITIVE_SCOPES: readonly Scope[] = [
  'members:manage',
  'sessions:manage',
  'audit:export',
  'gdpr:export',
  'domains:manage',
  'workspace:manage',
  'workspace:billing',
  'api_keys:manage',
];

export const DEFAULT_SCOPES: Scope[] = ['transfers:read', 'transfers:write'];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * Other names of a scope: the spec names the intake document route's scope `intake_read`, so a key
 * granted that name holds `intake:read`.
 */
const SCOPE_ALIASES: Readonly<Partial<Record<Scope, Scope>>> = { intake_read: 'intake:read' };

export function holdsScope(keyType: KeyType, scopes: readonly string[], required: string): boolean {
  return (
    keyType === 'full' ||
    scopes.includes('*') ||
    scopes.includes(required) ||
    scopes.some((held) => isScope(held) && SCOPE_ALIASES[held] === required)
  );
}

/** The sensitive scopes a key of this shape would hold (all of them for a full key or `*`). */
export function sensitiveScopesGranted(keyType: KeyType, scopes: readonly string[]): Scope[] {
  if (keyType === 'full' || scopes.includes('*')) return [...SENSITIVE_SCOPES];
  return SENSITIVE_SCOPES.filter((s) => scopes.includes(s));
}

/** Scopes of `wanted` that the creating key does not hold itself: a key never mints a stronger key. */
export function scopesBeyond(
  creator: { keyType: KeyType; scopes: readonly string[] },
  wanted: { keyType: KeyType; scopes: readonly string[] },
): string[] {
  const creatorIsAll = creator.keyType === 'full' || creator.scopes.includes('*');
  if (creatorIsAll) return [];
  if (wanted.keyType === 'full') return ['*'];
  return wanted.scopes.filter((s) => !holdsScope(creator.keyType, creator.scopes, s));
}
