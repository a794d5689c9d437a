import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { PageWindow } from '../../pagination.ts';
import type { Tenant } from '../../tenancy.ts';
import { ENVIRONMENTS } from '../../vocabulary.ts';
import { olderThanCursor } from '../paging.ts';
import { sql } from '../sql.ts';
import { transferColumns, transferRow } from './transfers.ts';

// Collections and their transfers (migrations/0016_collections.sql). Every
// query a request reaches names the tenant; the link's code alone finds a
// collection only for its public view, as a transfer's short code does.

export const collectionRow = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  title: z.string(),
  description: z.string().nullable(),
  share_code: z.string().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
  transfer_count: z.coerce.number().int(),
});
export type CollectionRow = z.infer<typeof collectionRow>;

/** A transfer of a collection, with its place in it. */
export const memberRow = transferRow.extend({ position: z.number().int(), added_at: z.date() });
export type MemberRow = z.infer<typeof memberRow>;

const columns = sql.fragment`
  c.id, c.workspace_id, c.environment, c.title, c.description, c.share_code, c.created_at, c.updated_at,
  (SELECT count(*) FROM collection_transfers ct WHERE ct.collection_id = c.id) AS transfer_count`;

const inTenant = (tenant: Tenant) =>
  sql.fragment`c.workspace_id = ${tenant.workspaceId} AND c.environment = ${tenant.environment}`;

export type CollectionChanges = { title?: string | undefined; description?: string | null | undefined };

export function createCollectionQueries(db: CommonQueryMethods) {
  const find = (tenant: Tenant, id: string): Promise<CollectionRow | null> =>
    db.maybeOne(
      sql.type(collectionRow)`SELECT ${columns} FROM collections c WHERE c.id = ${id} AND ${inTenant(tenant)}`,
    );

  return {
    find,

    async insert(
      tenant: Tenant,
      collection: { title: string; description: string | null; shareCode: string },
    ): Promise<CollectionRow> {
      const id = await db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
        INSERT INTO collections (workspace_id, environment, title, description, share_code)
        VALUES (${tenant.workspaceId}, ${tenant.environment}, ${collection.title}, ${collection.description},
                ${collection.shareCode})
        RETURNING id`);
      return db.one(sql.type(collectionRow)`SELECT ${columns} FROM collections c WHERE c.id = ${id}`);
    },

    /** Locks the collection until the transaction ends: its transfers and positions change one call at a time. */
    async lock(tenant: Tenant, id: string): Promise<boolean> {
      const row = await db.maybeOne(sql.type(z.object({ id: z.uuid() }))`
        SELECT c.id FROM collections c WHERE c.id = ${id} AND ${inTenant(tenant)} FOR UPDATE`);
      return row !== null;
    },

    /** By its link's code alone: for the public view, which the code entitles. */
    async findByShareCode(code: string): Promise<CollectionRow | null> {
      return db.maybeOne(sql.type(collectionRow)`SELECT ${columns} FROM collections c WHERE c.share_code = ${code}`);
    },

    async list(tenant: Tenant, window: PageWindow): Promise<readonly CollectionRow[]> {
      return db.any(sql.type(collectionRow)`
        SELECT ${columns} FROM collections c
        WHERE ${inTenant(tenant)} AND ${olderThanCursor(window, 'c')}
        ORDER BY c.created_at DESC, c.id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },

    async update(tenant: Tenant, id: string, changes: CollectionChanges): Promise<void> {
      const sets = [
        changes.title !== undefined && sql.fragment`title = ${changes.title}`,
        changes.description !== undefined && sql.fragment`description = ${changes.description}`,
        sql.fragment`updated_at = ms_now()`,
      ].filter((set) => set !== false);
      await db.query(sql.typeAlias('void')`
        UPDATE collections c SET ${sql.join(sets, sql.fragment`, `)} WHERE c.id = ${id} AND ${inTenant(tenant)}`);
    },

    /** A new code, or null to turn the link off. */
    async setShareCode(tenant: Tenant, id: string, code: string | null): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE collections c SET share_code = ${code}, updated_at = ms_now()
        WHERE c.id = ${id} AND ${inTenant(tenant)}`);
    },

    async remove(tenant: Tenant, id: string): Promise<void> {
      await db.query(sql.typeAlias('void')`DELETE FROM collections c WHERE c.id = ${id} AND ${inTenant(tenant)}`);
    },

    /** The collection's transfers, in order. */
    async members(tenant: Tenant, collectionId: string): Promise<readonly MemberRow[]> {
      return db.any(sql.type(memberRow)`
        SELECT ${transferColumns}, ct.position, ct.added_at
        FROM collection_transfers ct JOIN transfers t ON t.id = ct.transfer_id
        WHERE ct.collection_id = ${collectionId}
          AND ct.workspace_id = ${tenant.workspaceId} AND ct.environment = ${tenant.environment}
        ORDER BY ct.position`);
    },

    /** Which of `ids` are transfers of this tenant. */
    async ownTransfers(tenant: Tenant, ids: readonly string[]): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await db.any(sql.type(z.object({ id: z.uuid() }))`
        SELECT t.id FROM transfers t
        WHERE t.id = ANY (${sql.array([...ids], 'uuid')})
          AND t.workspace_id = ${tenant.workspaceId} AND t.environment = ${tenant.environment}`);
      return new Set(rows.map((row) => row.id));
    },

    /**
     * Makes `order` the collection's transfers, positions 0, 1, 2… in that order: new ones are
     * inserted, present ones renumbered (the position constraint is checked at commit), others left
     * alone, so drop those first. Run it in the transaction that locked the collection.
     */
    async writeOrder(tenant: Tenant, collectionId: string, order: readonly string[]): Promise<void> {
      if (order.length === 0) return;
      const rows = order.map((transferId, position) => [transferId, position]);
      await db.query(sql.typeAlias('void')`
        INSERT INTO collection_transfers (collection_id, transfer_id, workspace_id, environment, position)
        SELECT ${collectionId}, u.transfer_id, ${tenant.workspaceId}, ${tenant.environment}, u.position
        FROM ${sql.unnest(rows, ['uuid', 'int4'])} AS u(transfer_id, position)
        ON CONFLICT (collection_id, transfer_id) DO UPDATE SET position = EXCLUDED.position`);
    },

    /** Takes a transfer out; false when it was not in the collection. */
    async dropMember(tenant: Tenant, collectionId: string, transferId: string): Promise<boolean> {
      const dropped = await db.maybeOne(sql.type(z.object({ transfer_id: z.uuid() }))`
        DELETE FROM collection_transfers
        WHERE collection_id = ${collectionId} AND transfer_id = ${transferId}
          AND workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
        RETURNING transfer_id`);
      return dropped !== null;
    },
  };
}
