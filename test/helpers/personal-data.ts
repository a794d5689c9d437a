import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { sql } from '../../lib/db/sql.ts';
import { DECLARED_TABLES } from '../../lib/gdpr/declared.ts';

/**
 * Every declared personal column of every table (lib/families.ts), scanned for `value` as text,
 * anywhere in it, case-insensitively: the `table.column`s still holding it. Driven by the
 * declarations, so an erasure test covers a family added later without an edit.
 */
export async function personalColumnsHolding(db: CommonQueryMethods, value: string): Promise<string[]> {
  const found: string[] = [];
  for (const { table, declaration } of DECLARED_TABLES) {
    for (const column of declaration.personal) {
      const hits = await db.oneFirst(sql.type(z.object({ hits: z.number() }))`
        SELECT count(*)::int AS hits FROM ${sql.identifier([table])}
        WHERE strpos(lower(${sql.identifier([column])}::text), ${value.toLowerCase()}) > 0`);
      if (hits > 0) found.push(`${table}.${column}`);
    }
  }
  return found;
}
