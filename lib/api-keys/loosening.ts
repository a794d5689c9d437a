import { BlockList, isIP } from 'node:net';
import type { KeyType } from '../vocabulary.ts';
import { scopesBeyond } from './scopes.ts';

// A key holding api_keys:manage edits keys of its environment, some stronger
// than itself (docs/api-keys.md, "Stronger keys"). Loosening a stronger key
// needs the owner's verification code; tightening any key stays free.

type KeyShape = { keyType: KeyType; scopes: readonly string[] };

/** A key is stronger than the caller when it holds a scope the caller lacks (a full key: every scope). */
export function isStronger(caller: KeyShape, key: KeyShape): boolean {
  return scopesBeyond(caller, key).length > 0;
}

export type KeyLimits = { is_active: boolean; allowed_ips: readonly string[]; max_uses: number | null };
export type LimitChanges = {
  is_active?: boolean | undefined;
  allowed_ips?: readonly string[] | undefined;
  max_uses?: number | null | undefined;
  /** Scopes the change adds. */
  addedScopes: readonly string[];
};

/** The fields of a change that loosen a key: re-activation, a wider IP allow-list, a higher cap, more scopes. */
export function loosenedFields(current: KeyLimits, change: LimitChanges): string[] {
  const loosened: string[] = [];
  if (change.is_active === true && !current.is_active) loosened.push('is_active');
  if (change.allowed_ips !== undefined && widensAllowList(current.allowed_ips, change.allowed_ips)) {
    loosened.push('allowed_ips');
  }
  if (
    change.max_uses !== undefined &&
    current.max_uses !== null &&
    (change.max_uses === null || change.max_uses > current.max_uses)
  ) {
    loosened.push('max_uses');
  }
  if (change.addedScopes.length > 0) loosened.push('scopes');
  return loosened;
}

/**
 * True when `next` lets in an address `current` keeps out: an empty list (every address) replacing a non-empty
 * one, or an entry not inside any entry of `current`. An empty `current` already lets everything in.
 */
export function widensAllowList(current: readonly string[], next: readonly string[]): boolean {
  if (current.length === 0) return false;
  if (next.length === 0) return true;
  return next.some((entry) => !current.some((outer) => contains(outer, entry)));
}

/** Whether CIDR range (or address) `outer` contains every address of `inner`. */
function contains(outer: string, inner: string): boolean {
  const [outerBase = '', outerBits] = outer.split('/');
  const [innerBase = '', innerBits] = inner.split('/');
  // Entries are compared as written (an IPv4-mapped IPv6 entry is IPv6 here): a doubt counts as widening.
  const outerIp = outerBase;
  const innerIp = innerBase;
  const family = isIP(outerIp);
  if (family === 0 || isIP(innerIp) !== family) return false;
  const full = family === 4 ? 32 : 128;
  const outerLength = outerBits === undefined ? full : Number(outerBits);
  const innerLength = innerBits === undefined ? full : Number(innerBits);
  // Every address of `inner` shares its first innerLength bits with innerBase, so with a prefix no longer than
  // that, `outer` holds all of `inner` exactly when it holds innerBase.
  if (outerLength > innerLength) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const list = new BlockList();
  list.addSubnet(outerIp, outerLength, type);
  return list.check(innerIp, type);
}
