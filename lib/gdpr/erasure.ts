import type { DatabasePool, DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { createPersonalDataQueries, type Person, type RowScope } from '../db/queries/personal-data.ts';
import { sql } from '../db/sql.ts';
import { notFound } from '../errors.ts';
import { DECLARED_TABLES } from './declared.ts';

// The erasure of one user of a workspace (GDPR art. 17), in every environment, driven by the
// families' declarations (lib/family.ts): in every table that declares its subjects, the rows about
// the user (a subject column holds their id or one of their addresses) have their personal columns
// pseudonymised; their addresses are then removed from every personal column of the workspace,
// wherever written; their API keys are revoked. One transaction: all of it or nothing. Running it
// again changes nothing more. A table may declare its own `erase` (lib/family.ts), which then
// replaces the generic step for that table.

export type ErasureResult = {
  user_id: string;
  /** Rows changed, by table (only tables with changes). */
  tables: Record<string, number>;
  api_keys_revoked: number;
};

const userRow = z.object({ id: z.uuid(), email: z.string() });

/** The pseudonymous address that replaces an erased user's, unique per user. */
export const erasedAddress = (userId: string) => `erased-${userId}@erased.invalid`;

/**
 * Erases `userId` of `workspaceId`. `db` may be a transaction of the caller's (SCIM's DELETE of a
 * user, say): the erasure is then a savepoint within it, kept or rolled back with it.
 */
export async function eraseUser(
  db: DatabasePool | DatabaseTransactionConnection,
  workspaceId: string,
  userId: string,
): Promise<ErasureResult> {
  return db.transaction(async (tx) => {
    const user = await tx.maybeOne(sql.type(userRow)`
      SELECT id, email FROM users WHERE id = ${userId} AND workspace_id = ${workspaceId} FOR UPDATE`);
    if (!user) throw notFound('user');
    const pseudonym = erasedAddress(user.id);
    const emails = user.email === pseudonym ? [] : [user.email.toLowerCase()];
    const person: Person = { userId: user.id, emails };
    const scope: RowScope = { workspaceId, environment: null };
    const queries = createPersonalDataQueries(tx, DECLARED_TABLES);
    const catalog = await queries.catalog();

    // What else names them, read before anything changes: the names and network addresses in the
    // rows about them, looked for in JSON documents too (an event payload naming them).
    const values = new Set(emails);
    for (const { table, declaration } of DECLARED_TABLES) {
      if (declaration.erase) continue;
      for (const value of await queries.identifyingValues(catalog, table, scope, person))
        values.add(value.toLowerCase());
    }
    values.delete(pseudonym);

    const revoked = await tx.anyFirst(sql.type(z.object({ id: z.uuid() }))`
      UPDATE api_keys SET revoked_at = ms_now(), revocation_reason = 'other', is_active = false
      WHERE workspace_id = ${workspaceId} AND user_id = ${user.id} AND revoked_at IS NULL
      RETURNING id`);

    const tables: Record<string, number> = {};
    for (const { table, declaration } of DECLARED_TABLES) {
      const changed = declaration.erase
        ? await declaration.erase(tx, { workspaceId, userId: user.id, emails })
        : (await queries.erase(catalog, table, scope, person, [...values], pseudonym)) +
          (await queries.eraseAddressesEverywhere(catalog, table, scope, person, pseudonym));
      if (changed > 0) tables[table] = changed;
    }
    return { user_id: user.id, tables, api_keys_revoked: revoked.length };
  });
}
