import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import {
  COFFRE_ACCESS_LEVELS,
  COFFRE_ACTIONS,
  COFFRE_ACTOR_TYPES,
  COFFRE_ITEM_STATUSES,
  COFFRE_STATUSES,
  type CoffreAccessLevel,
  type CoffreAction,
  type CoffreActorType,
  type CoffreItemStatus,
} from '../../coffres/vocabulary.ts';
import type { PageWindow } from '../../pagination.ts';
import type { Tenant } from '../../tenancy.ts';
import { ENVIRONMENTS } from '../../vocabulary.ts';
import { olderThanCursor } from '../paging.ts';
import { sql } from '../sql.ts';
import { storedFileColumns, storedFileRow } from './stored-files.ts';

// Rows and SQL of the vault tables (migrations/0015_coffres.sql, docs/coffres.md).
// What an owner's request reaches is filtered by workspace and environment; the
// `…ById` reads serve workers and signed tokens, which already prove their target.

export const coffreRow = z.object({
  id: z.string(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  name: z.string(),
  description: z.string().nullable(),
  status: z.enum(COFFRE_STATUSES),
  expires_at: z.date().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
  ended_at: z.date().nullable(),
  member_count: z.coerce.number().int(),
  item_count: z.coerce.number().int(),
});
export type CoffreRow = z.infer<typeof coffreRow>;

export const memberRow = z.object({
  id: z.string(),
  coffre_id: z.string(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  email: z.string(),
  name: z.string().nullable(),
  access: z.enum(COFFRE_ACCESS_LEVELS),
  invitation_nonce: z.string().nullable(),
  invitation_expires_at: z.date().nullable(),
  invited_at: z.date().nullable(),
  revoked_at: z.date().nullable(),
  last_accessed_on: z.string().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type MemberRow = z.infer<typeof memberRow>;

export const itemRow = storedFileRow.extend({
  coffre_id: z.string(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  status: z.enum(COFFRE_ITEM_STATUSES),
  uploaded_by_member_id: z.string().nullable(),
  uploaded_by_api_key_id: z.uuid().nullable(),
  upload_deadline: z.date(),
  deleted_at: z.date().nullable(),
});
export type ItemRow = z.infer<typeof itemRow>;

export const accessLogRow = z.object({
  id: z.uuid(),
  coffre_id: z.string(),
  actor_type: z.enum(COFFRE_ACTOR_TYPES),
  member_id: z.string().nullable(),
  actor: z.string(),
  action: z.enum(COFFRE_ACTIONS),
  item_id: z.uuid().nullable(),
  item_name: z.string().nullable(),
  ip_address: z.string().nullable(),
  created_at: z.date(),
});
export type AccessLogRow = z.infer<typeof accessLogRow>;

const coffreColumns = sql.fragment`
  c.id, c.workspace_id, c.environment, c.name, c.description, c.status, c.expires_at, c.created_at, c.updated_at,
  c.ended_at,
  (SELECT count(*) FROM coffre_members m WHERE m.coffre_id = c.id AND m.revoked_at IS NULL) AS member_count,
  (SELECT count(*) FROM coffre_items i WHERE i.coffre_id = c.id AND i.status <> 'deleted') AS item_count`;

const memberColumns = sql.fragment`
  id, coffre_id, workspace_id, environment, email, name, access, invitation_nonce, invitation_expires_at, invited_at,
  revoked_at, last_accessed_on::text, created_at, updated_at`;

const itemColumns = sql.fragment`${storedFileColumns}, coffre_id, workspace_id, environment, status,
  uploaded_by_member_id, uploaded_by_api_key_id, upload_deadline, deleted_at`;

const logColumns = sql.fragment`
  id, coffre_id, actor_type, member_id, actor, action, item_id, item_name, ip_address, created_at`;

const inTenant = (tenant: Tenant, alias = '') => {
  const prefix = alias ? sql.fragment`${sql.identifier([alias])}.` : sql.fragment``;
  return sql.fragment`${prefix}workspace_id = ${tenant.workspaceId} AND ${prefix}environment = ${tenant.environment}`;
};

const lock = (forUpdate: boolean) => (forUpdate ? sql.fragment`FOR UPDATE OF c` : sql.fragment``);

export type NewItem = Tenant & {
  id: string;
  coffreId: string;
  name: string;
  size: number;
  mimeType: string;
  objectKey: string;
  encryptedSize: number;
  uploadDeadline: Date;
  uploadedBy: { memberId: string } | { apiKeyId: string };
};

export type AccessEntry = {
  coffre: Pick<CoffreRow, 'id' | 'workspace_id' | 'environment'>;
  actorType: CoffreActorType;
  memberId: string | null;
  actor: string;
  action: CoffreAction;
  item: { id: string; name: string } | null;
  ip: string | null;
};

export function createCoffreQueries(db: CommonQueryMethods) {
  return {
    async insert(
      tenant: Tenant,
      coffre: { id: string; name: string; description: string | null; expiresAt: Date | null },
    ) {
      await db.query(sql.typeAlias('void')`
        INSERT INTO coffres (id, workspace_id, environment, name, description, expires_at)
        VALUES (${coffre.id}, ${tenant.workspaceId}, ${tenant.environment}, ${coffre.name}, ${coffre.description},
          ${coffre.expiresAt ? sql.timestamp(coffre.expiresAt) : null})`);
    },

    /** A live (not deleted) vault of the tenant; `forUpdate` locks it until the transaction ends. */
    async find(tenant: Tenant, id: string, forUpdate = false): Promise<CoffreRow | null> {
      return db.maybeOne(sql.type(coffreRow)`
        SELECT ${coffreColumns} FROM coffres c
        WHERE c.id = ${id} AND ${inTenant(tenant, 'c')} AND c.status <> 'deleted' ${lock(forUpdate)}`);
    },

    /**
     * The vault as its latest writer leaves it: waits for a transaction changing it to commit (a
     * shared lock), so a workflow told of a change from inside that transaction reads the change.
     */
    async findCommitted(id: string): Promise<CoffreRow | null> {
      return db.maybeOne(sql.type(coffreRow)`SELECT ${coffreColumns} FROM coffres c WHERE c.id = ${id} FOR SHARE OF c`);
    },

    async findById(id: string, forUpdate = false): Promise<CoffreRow | null> {
      return db.maybeOne(
        sql.type(coffreRow)`SELECT ${coffreColumns} FROM coffres c WHERE c.id = ${id} ${lock(forUpdate)}`,
      );
    },

    async list(tenant: Tenant, window: PageWindow): Promise<readonly CoffreRow[]> {
      return db.any(sql.type(coffreRow)`
        SELECT ${coffreColumns} FROM coffres c
        WHERE ${inTenant(tenant, 'c')} AND c.status <> 'deleted' AND ${olderThanCursor(window, 'c')}
        ORDER BY c.created_at DESC, c.id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },

    async update(
      id: string,
      changes: {
        name?: string | undefined;
        description?: string | null | undefined;
        expiresAt?: Date | null | undefined;
      },
    ): Promise<void> {
      const sets = [
        changes.name !== undefined && sql.fragment`name = ${changes.name}`,
        changes.description !== undefined && sql.fragment`description = ${changes.description}`,
        changes.expiresAt !== undefined &&
          sql.fragment`expires_at = ${changes.expiresAt ? sql.timestamp(changes.expiresAt) : null}`,
      ].filter((set) => set !== false);
      await db.query(sql.typeAlias('void')`
        UPDATE coffres SET ${sql.join([...sets, sql.fragment`updated_at = ms_now()`], sql.fragment`, `)}
        WHERE id = ${id}`);
    },

    /**
     * Ends an active vault (`expired` or `deleted`; a deleted one may also be expired): every
     * item's key is destroyed in the same transaction and every invitation dies. Answers the
     * items whose blobs are left to remove; null when the vault was no longer in a state to end.
     */
    async end(id: string, status: 'expired' | 'deleted'): Promise<readonly string[] | null> {
      const ended = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
        UPDATE coffres SET status = ${status}, ended_at = COALESCE(ended_at, ms_now()), updated_at = ms_now()
        WHERE id = ${id} AND status = ANY(${sql.array(status === 'deleted' ? ['active', 'expired'] : ['active'], 'text')})
        RETURNING id`);
      if (!ended) return null;
      await db.query(sql.typeAlias('void')`
        UPDATE coffre_members SET invitation_nonce = NULL, updated_at = ms_now() WHERE coffre_id = ${id}`);
      return db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
        UPDATE coffre_items
        SET status = 'deleted', deleted_at = COALESCE(deleted_at, ms_now()), data_key_wrapped = NULL, nonce_prefix = NULL
        WHERE coffre_id = ${id} AND status <> 'deleted'
        RETURNING id`);
    },

    // Members

    async insertMember(
      coffre: CoffreRow,
      member: { id: string; email: string; name: string | null; access: CoffreAccessLevel },
    ): Promise<MemberRow> {
      return db.one(sql.type(memberRow)`
        INSERT INTO coffre_members (id, coffre_id, workspace_id, environment, email, name, access)
        VALUES (${member.id}, ${coffre.id}, ${coffre.workspace_id}, ${coffre.environment}, ${member.email},
          ${member.name}, ${member.access})
        RETURNING ${memberColumns}`);
    },

    /** A live member of the vault by address, to refuse a second invitation of the same person. */
    async memberByEmail(coffreId: string, email: string): Promise<MemberRow | null> {
      return db.maybeOne(sql.type(memberRow)`
        SELECT ${memberColumns} FROM coffre_members
        WHERE coffre_id = ${coffreId} AND lower(email) = lower(${email}) AND revoked_at IS NULL`);
    },

    /** A member of the tenant's vault, revoked ones included. */
    async findMember(tenant: Tenant, coffreId: string, memberId: string): Promise<MemberRow | null> {
      return db.maybeOne(sql.type(memberRow)`
        SELECT ${memberColumns} FROM coffre_members
        WHERE id = ${memberId} AND coffre_id = ${coffreId} AND ${inTenant(tenant)}`);
    },

    /** `forShare` holds a revocation or access change until the caller's transaction ends. */
    async memberById(id: string, forShare = false): Promise<MemberRow | null> {
      return db.maybeOne(sql.type(memberRow)`
        SELECT ${memberColumns} FROM coffre_members WHERE id = ${id} ${forShare ? sql.fragment`FOR SHARE` : sql.fragment``}`);
    },

    async listMembers(tenant: Tenant, coffreId: string, window: PageWindow): Promise<readonly MemberRow[]> {
      return db.any(sql.type(memberRow)`
        SELECT ${memberColumns} FROM coffre_members m
        WHERE coffre_id = ${coffreId} AND ${inTenant(tenant)} AND ${olderThanCursor(window, 'm')}
        ORDER BY created_at DESC, id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },

    /** A new invitation: a new nonce and expiry, so that every earlier link of this member stops working. */
    async invite(memberId: string, nonce: string, expiresAt: Date): Promise<MemberRow> {
      return db.one(sql.type(memberRow)`
        UPDATE coffre_members
        SET invitation_nonce = ${nonce}, invitation_expires_at = ${sql.timestamp(expiresAt)}, invited_at = ms_now(),
            updated_at = ms_now()
        WHERE id = ${memberId}
        RETURNING ${memberColumns}`);
    },

    async setAccess(memberId: string, access: CoffreAccessLevel): Promise<MemberRow> {
      return db.one(sql.type(memberRow)`
        UPDATE coffre_members SET access = ${access}, updated_at = ms_now() WHERE id = ${memberId}
        RETURNING ${memberColumns}`);
    },

    async revoke(memberId: string): Promise<MemberRow | null> {
      return db.maybeOne(sql.type(memberRow)`
        UPDATE coffre_members SET revoked_at = ms_now(), invitation_nonce = NULL, updated_at = ms_now()
        WHERE id = ${memberId} AND revoked_at IS NULL
        RETURNING ${memberColumns}`);
    },

    /** True once per member and UTC day: the open that emits `coffre.accessed`. */
    async firstOpenToday(memberId: string): Promise<boolean> {
      const marked = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
        UPDATE coffre_members SET last_accessed_on = (ms_now() AT TIME ZONE 'UTC')::date
        WHERE id = ${memberId}
          AND (last_accessed_on IS NULL OR last_accessed_on < (ms_now() AT TIME ZONE 'UTC')::date)
        RETURNING id`);
      return marked !== null;
    },

    // Items

    async insertItem(item: NewItem): Promise<ItemRow> {
      const memberId = 'memberId' in item.uploadedBy ? item.uploadedBy.memberId : null;
      const apiKeyId = 'apiKeyId' in item.uploadedBy ? item.uploadedBy.apiKeyId : null;
      return db.one(sql.type(itemRow)`
        INSERT INTO coffre_items (id, coffre_id, workspace_id, environment, name, size, mime_type, object_key,
          encrypted_size, upload_deadline, uploaded_by_member_id, uploaded_by_api_key_id)
        VALUES (${item.id}, ${item.coffreId}, ${item.workspaceId}, ${item.environment}, ${item.name}, ${item.size},
          ${item.mimeType}, ${item.objectKey}, ${item.encryptedSize}, ${sql.timestamp(item.uploadDeadline)},
          ${memberId}, ${apiKeyId})
        RETURNING ${itemColumns}`);
    },

    /** An item of the tenant's vault, deleted ones included (they answer 410). */
    async findItem(tenant: Tenant, coffreId: string, itemId: string): Promise<ItemRow | null> {
      if (!z.uuid().safeParse(itemId).success) return null;
      return db.maybeOne(sql.type(itemRow)`
        SELECT ${itemColumns} FROM coffre_items
        WHERE id = ${itemId} AND coffre_id = ${coffreId} AND ${inTenant(tenant)}`);
    },

    async itemById(itemId: string): Promise<ItemRow | null> {
      if (!z.uuid().safeParse(itemId).success) return null;
      return db.maybeOne(sql.type(itemRow)`SELECT ${itemColumns} FROM coffre_items WHERE id = ${itemId}`);
    },

    async listItems(
      tenant: Tenant,
      coffreId: string,
      filter: { statuses: readonly CoffreItemStatus[] },
      window: PageWindow,
    ): Promise<readonly ItemRow[]> {
      return db.any(sql.type(itemRow)`
        SELECT ${itemColumns} FROM coffre_items i
        WHERE coffre_id = ${coffreId} AND ${inTenant(tenant)} AND status = ANY(${sql.array(filter.statuses, 'text')})
          AND ${olderThanCursor(window, 'i')}
        ORDER BY created_at DESC, id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },

    /** Every item of a vault in a state, newest first: what a member's page lists. */
    async itemsOf(coffreId: string, statuses: readonly CoffreItemStatus[]): Promise<readonly ItemRow[]> {
      return db.any(sql.type(itemRow)`
        SELECT ${itemColumns} FROM coffre_items
        WHERE coffre_id = ${coffreId} AND status = ANY(${sql.array(statuses, 'text')})
        ORDER BY created_at DESC, id DESC`);
    },

    async moveItem(id: string, from: readonly CoffreItemStatus[], to: CoffreItemStatus): Promise<ItemRow | null> {
      return db.maybeOne(sql.type(itemRow)`
        UPDATE coffre_items SET status = ${to}
        WHERE id = ${id} AND status = ANY(${sql.array(from, 'text')})
        RETURNING ${itemColumns}`);
    },

    async recordScan(
      itemId: string,
      scan: { sha256: string; scanStatus: ItemRow['scan_status']; signature: string | null },
    ): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE coffre_items SET sha256 = ${scan.sha256}, scan_status = ${scan.scanStatus},
          scan_signature = ${scan.signature}
        WHERE id = ${itemId}`);
    },

    /**
     * Shreds an item: its sealed data key goes in the same statement as its state, so what is
     * left in storage can no longer be opened. The row stays so that its route answers 410.
     */
    async destroyItem(id: string, status: 'deleted' | 'rejected' = 'deleted'): Promise<ItemRow | null> {
      return db.maybeOne(sql.type(itemRow)`
        UPDATE coffre_items
        SET status = ${status}, deleted_at = CASE WHEN ${status} = 'deleted' THEN ms_now() ELSE deleted_at END,
            data_key_wrapped = NULL, nonce_prefix = NULL
        WHERE id = ${id} AND status NOT IN ('deleted', 'rejected')
        RETURNING ${itemColumns}`);
    },

    // Access log

    async logAccess(entry: AccessEntry): Promise<void> {
      await db.query(sql.typeAlias('void')`
        INSERT INTO coffre_access_log (coffre_id, workspace_id, environment, actor_type, member_id, actor, action,
          item_id, item_name, ip_address)
        VALUES (${entry.coffre.id}, ${entry.coffre.workspace_id}, ${entry.coffre.environment}, ${entry.actorType},
          ${entry.memberId}, ${entry.actor}, ${entry.action}, ${entry.item?.id ?? null}, ${entry.item?.name ?? null},
          ${entry.ip})`);
    },

    async listAccess(tenant: Tenant, coffreId: string, window: PageWindow): Promise<readonly AccessLogRow[]> {
      return db.any(sql.type(accessLogRow)`
        SELECT ${logColumns} FROM coffre_access_log l
        WHERE coffre_id = ${coffreId} AND ${inTenant(tenant)} AND ${olderThanCursor(window, 'l')}
        ORDER BY created_at DESC, id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },
  };
}
