import type { DatabasePool } from 'slonik';
import { type Keyring, KeyWrapError, rewrapDataKey } from '../crypto/key-wrap.ts';
import { createKeyWrappedQueries } from '../db/queries/key-wrapped.ts';
import { KEY_WRAPPED_COLUMNS } from '../families.ts';

// Master-key rotation (docs/encryption.md, "Master keys"): every value the keyring wraps, found
// through the families' declarations (lib/family.ts, `keyWrapped`) rather than a list of its own,
// is re-wrapped under the current master key, a batch per transaction; then the old key wraps
// nothing and can leave MASTER_KEYS. The workflow that drives it is workflows/rewrapDataKeys.ts.

export type RotationDeps = { db: DatabasePool; keyring: Keyring };

/** A declared column, named `table.column`: how a workflow refers to it. */
export type PlaceName = string;

/** Failed values named per batch, at most: enough to look into, never a flood in a workflow's history. */
const FAILURES_NAMED = 20;

/** Every declared column of keyring-wrapped values, in declaration order. */
export function keyWrappedPlaces(): PlaceName[] {
  return KEY_WRAPPED_COLUMNS.map(({ table, column }) => `${table}.${column}`);
}

function placeNamed(name: PlaceName) {
  const place = KEY_WRAPPED_COLUMNS.find(({ table, column }) => `${table}.${column}` === name);
  if (!place) throw new Error(`no family declares ${name} as holding keyring-wrapped values`);
  return place;
}

/** The worker's keyring does not make `target` current: re-wrapping would not retire anything. */
export class MasterKeyMismatchError extends Error {
  override readonly name = 'MasterKeyMismatchError';
}

export type RewrapBatchResult = {
  /** Values re-wrapped under the target key in this batch. */
  rewrapped: number;
  /** Values that would not open (a key missing from the keyring, an altered value): left as they are. */
  failed: number;
  /** The rows of the first failures, as `table.column:id`. */
  failures: string[];
  /** Where the next batch starts: the last row this one read (`after` again when it read none). */
  last: string | null;
  /** No row left after `last` in this column. */
  done: boolean;
};

/**
 * Re-wraps up to `limit` values of `placeName` after row `after` that the target key does not wrap
 * yet, in one transaction: each is unwrapped with the key it names and wrapped again under the
 * target, with the same AAD, and written only if unchanged since it was read. Values already under
 * the target are not read at all, so a batch run twice (a retry after a worker died) changes
 * nothing the second time.
 */
export async function rewrapBatch(
  deps: RotationDeps,
  placeName: PlaceName,
  targetKeyId: string,
  after: string | null,
  limit: number,
): Promise<RewrapBatchResult> {
  const { keyring } = deps;
  if (keyring.currentId !== targetKeyId) {
    throw new MasterKeyMismatchError(
      `this process's current master key is "${keyring.currentId}", not "${targetKeyId}": deploy MASTER_KEY_ID=${targetKeyId} (with the key in MASTER_KEYS) everywhere first`,
    );
  }
  const place = placeNamed(placeName);
  return deps.db.transaction(async (tx) => {
    const queries = createKeyWrappedQueries(tx);
    const rows = await queries.lockNotUnder(place, targetKeyId, after, limit);
    const rewraps = [];
    const failures: string[] = [];
    let failed = 0;
    for (const row of rows) {
      try {
        rewraps.push({ id: row.id, from: row.wrapped, to: rewrapDataKey(keyring, row.wrapped, place.aad(row.id)) });
      } catch (error) {
        if (!(error instanceof KeyWrapError)) throw error;
        failed++;
        if (failures.length < FAILURES_NAMED) failures.push(`${placeName}:${row.id} (${error.reason})`);
      }
    }
    const rewrapped = await queries.replace(place, rewraps);
    return { rewrapped, failed, failures, last: rows.at(-1)?.id ?? after, done: rows.length < limit };
  });
}

/** How many values each master key wraps: by `table.column`, then by key id; and in all, by key id. */
export type WrappedCounts = { byPlace: Record<PlaceName, Record<string, number>>; byKey: Record<string, number> };

export async function countWrappedByKey(db: DatabasePool): Promise<WrappedCounts> {
  const queries = createKeyWrappedQueries(db);
  const byPlace: WrappedCounts['byPlace'] = {};
  const byKey: WrappedCounts['byKey'] = {};
  for (const place of KEY_WRAPPED_COLUMNS) {
    const counts = await queries.countByKey(place);
    byPlace[`${place.table}.${place.column}`] = counts;
    for (const [keyId, count] of Object.entries(counts)) byKey[keyId] = (byKey[keyId] ?? 0) + count;
  }
  return { byPlace, byKey };
}

export type Retirement =
  | { retirable: true; keyId: string }
  | {
      retirable: false;
      keyId: string;
      reason: 'current' | 'in_use';
      remaining: number;
      byPlace: Record<string, number>;
    };

/**
 * Whether master key `keyId` can leave MASTER_KEYS: it must not be the current key (it would wrap
 * the next file's key), and no stored value may still depend on it.
 */
export async function checkRetirement(deps: RotationDeps, keyId: string): Promise<Retirement> {
  const counts = await countWrappedByKey(deps.db);
  const byPlace = Object.fromEntries(
    Object.entries(counts.byPlace)
      .map(([place, byKey]): [string, number] => [place, byKey[keyId] ?? 0])
      .filter(([, count]) => count > 0),
  );
  const remaining = counts.byKey[keyId] ?? 0;
  if (deps.keyring.currentId === keyId) return { retirable: false, keyId, reason: 'current', remaining, byPlace };
  if (remaining > 0) return { retirable: false, keyId, reason: 'in_use', remaining, byPlace };
  return { retirable: true, keyId };
}
