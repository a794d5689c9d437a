import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { sql } from '../sql.ts';

// Values the master keyring wraps, in whichever declared table and column holds them (lib/family.ts,
// `keyWrapped`): counted by master key, and re-wrapped a batch at a time by a rotation
// (lib/master-keys/rotation.ts). The stored form is `v1.<keyId>.<iv>.<body>` (lib/crypto/key-wrap.ts),
// so the master key a value depends on is its second dot-separated field. Every table has `id uuid`.

/** A declared column of keyring-wrapped values. */
export type KeyWrappedPlace = { table: string; column: string };

export type LockedWrapped = { id: string; wrapped: string };

/** A value to replace, only if it is still what was read (`from`). */
export type Rewrap = { id: string; from: string; to: string };

const keyIdOf = (column: ReturnType<typeof sql.identifier>) => sql.fragment`split_part(${column}, '.', 2)`;

export function createKeyWrappedQueries(db: CommonQueryMethods) {
  return {
    /** How many values of `place` each master key wraps, by key id. */
    async countByKey(place: KeyWrappedPlace): Promise<Record<string, number>> {
      const column = sql.identifier([place.column]);
      const rows = await db.any(sql.type(z.object({ key_id: z.string(), count: z.coerce.number() }))`
        SELECT ${keyIdOf(column)} AS key_id, count(*) AS count
        FROM ${sql.identifier([place.table])}
        WHERE ${column} IS NOT NULL
        GROUP BY 1`);
      return Object.fromEntries(rows.map((row) => [row.key_id, row.count]));
    },

    /**
     * Up to `limit` values of `place` after row `after` (in id order) that `keyId` does not wrap,
     * locked until the transaction ends, so that nothing changes them between their unwrapping and
     * their update (an upload starting over, a transfer ending). The lock an UPDATE of a non-key
     * column takes anyway: rows that reference these (a download's use of its file) are not held up.
     */
    async lockNotUnder(
      place: KeyWrappedPlace,
      keyId: string,
      after: string | null,
      limit: number,
    ): Promise<readonly LockedWrapped[]> {
      const column = sql.identifier([place.column]);
      return db.any(sql.type(z.object({ id: z.string(), wrapped: z.string() }))`
        SELECT id::text AS id, ${column} AS wrapped
        FROM ${sql.identifier([place.table])}
        WHERE ${column} IS NOT NULL AND ${keyIdOf(column)} <> ${keyId}
          AND ${after === null ? sql.fragment`true` : sql.fragment`id > ${after}::uuid`}
        ORDER BY id
        LIMIT ${limit}
        FOR NO KEY UPDATE`);
    },

    /** Replaces each value still equal to its `from`; answers how many were replaced. */
    async replace(place: KeyWrappedPlace, rewraps: readonly Rewrap[]): Promise<number> {
      if (rewraps.length === 0) return 0;
      const column = sql.identifier([place.column]);
      const rows = rewraps.map((r) => [r.id, r.from, r.to]);
      return db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
        WITH replaced AS (
          UPDATE ${sql.identifier([place.table])} AS t SET ${column} = v.to_value
          FROM ${sql.unnest(rows, ['uuid', 'text', 'text'])} AS v(id, from_value, to_value)
          WHERE t.id = v.id AND ${sql.identifier(['t', place.column])} = v.from_value
          RETURNING 1)
        SELECT count(*) AS count FROM replaced`);
    },
  };
}
