import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { PageWindow } from '../../pagination.ts';
import { RECIPIENT_SOURCES, type RecipientSource } from '../../recipients/vocabulary.ts';
import type { Tenant } from '../../tenancy.ts';
import { ENVIRONMENTS } from '../../vocabulary.ts';
import { olderThanCursor } from '../paging.ts';
import { sql } from '../sql.ts';

// The address book (recipients), the personal links of transfers
// (transfer_recipients) and what those links delivered (recipient_grants,
// recipient_deliveries): migrations/0017_recipients.sql, docs/recipients.md.

export const recipientRow = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  email: z.string(),
  name: z.string().nullable(),
  organisation: z.string().nullable(),
  tags: z.array(z.string()),
  source: z.enum(RECIPIENT_SOURCES),
  created_at: z.date(),
  updated_at: z.date(),
  transfers_sent: z.coerce.number().int(),
  downloads_completed: z.coerce.number().int(),
  last_sent_at: z.date().nullable(),
  last_downloaded_at: z.date().nullable(),
});
export type RecipientRow = z.infer<typeof recipientRow>;

export const transferRecipientRow = z.object({
  id: z.uuid(),
  transfer_id: z.uuid(),
  recipient_id: z.uuid().nullable(),
  email: z.string(),
  position: z.number().int(),
  share_code: z.string(),
  downloads_completed: z.number().int(),
  last_downloaded_at: z.date().nullable(),
  mailed_at: z.date().nullable(),
  created_at: z.date(),
  files_downloaded: z.array(z.uuid()),
});
export type TransferRecipientRow = z.infer<typeof transferRecipientRow>;

// The entry with its statistics, summed over the personal links it was given.
const recipientColumns = sql.fragment`
  r.id, r.workspace_id, r.environment, r.email, r.name, r.organisation, r.tags, r.source, r.created_at,
  r.updated_at, s.transfers_sent, s.downloads_completed, s.last_sent_at, s.last_downloaded_at`;
const recipientStats = sql.fragment`
  LEFT JOIN LATERAL (
    SELECT count(*) AS transfers_sent, coalesce(sum(l.downloads_completed), 0) AS downloads_completed,
      max(l.created_at) AS last_sent_at, max(l.last_downloaded_at) AS last_downloaded_at
    FROM transfer_recipients l WHERE l.recipient_id = r.id
  ) s ON TRUE`;

const linkColumns = sql.fragment`
  l.id, l.transfer_id, l.recipient_id, l.email, l.position, l.share_code, l.downloads_completed,
  l.last_downloaded_at, l.mailed_at, l.created_at,
  ARRAY(
    SELECT DISTINCT d.file_id FROM recipient_grants g JOIN recipient_deliveries d ON d.grant_id = g.grant_id
    WHERE g.transfer_recipient_id = l.id AND d.completed_at IS NOT NULL
  ) AS files_downloaded`;

export type RecipientFilters = { search?: string | undefined; tag?: string | undefined };

export type RecipientChanges = Partial<{
  email: string;
  name: string | null;
  organisation: string | null;
  tags: string[];
}>;

/** A personal link as a share code resolves it: enough to serve and attribute a download. */
export const personalLinkRow = z.object({
  id: z.uuid(),
  transfer_id: z.uuid(),
  recipient_id: z.uuid().nullable(),
  email: z.string(),
});
export type PersonalLink = z.infer<typeof personalLinkRow>;

const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function createRecipientQueries(db: CommonQueryMethods) {
  return {
    async insert(
      tenant: Tenant,
      entry: { email: string; name: string | null; organisation: string | null; tags: string[] },
    ): Promise<string | null> {
      return db.maybeOneFirst(sql.type(z.object({ id: z.uuid() }))`
        INSERT INTO recipients (workspace_id, environment, email, name, organisation, tags, source)
        VALUES (${tenant.workspaceId}, ${tenant.environment}, ${entry.email}, ${entry.name}, ${entry.organisation},
          ${sql.array(entry.tags, 'text')}, 'api')
        ON CONFLICT (workspace_id, environment, lower(email)) DO NOTHING
        RETURNING id`);
    },

    /**
     * The entry of an address, created (`source`) when there is none: never changes an existing one.
     * `created` says which.
     */
    async upsertAddress(
      tenant: Tenant,
      email: string,
      source: RecipientSource,
    ): Promise<{ id: string; created: boolean }> {
      // DO UPDATE (a no-op) rather than DO NOTHING, so that an existing row is returned and locked.
      return db.one(sql.type(z.object({ id: z.uuid(), created: z.boolean() }))`
        INSERT INTO recipients AS r (workspace_id, environment, email, source)
        VALUES (${tenant.workspaceId}, ${tenant.environment}, ${email}, ${source})
        ON CONFLICT (workspace_id, environment, lower(email)) DO UPDATE SET email = r.email
        RETURNING r.id, (r.xmax = 0) AS created`);
    },

    async find(tenant: Tenant, id: string): Promise<RecipientRow | null> {
      return db.maybeOne(sql.type(recipientRow)`
        SELECT ${recipientColumns} FROM recipients r ${recipientStats}
        WHERE r.id = ${id} AND r.workspace_id = ${tenant.workspaceId} AND r.environment = ${tenant.environment}`);
    },

    async findByEmail(tenant: Tenant, email: string): Promise<{ id: string } | null> {
      return db.maybeOne(sql.type(z.object({ id: z.uuid() }))`
        SELECT id FROM recipients
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
          AND lower(email) = lower(${email})`);
    },

    async list(tenant: Tenant, filters: RecipientFilters, window: PageWindow): Promise<readonly RecipientRow[]> {
      const conditions = [
        sql.fragment`r.workspace_id = ${tenant.workspaceId}`,
        sql.fragment`r.environment = ${tenant.environment}`,
        olderThanCursor(window, 'r'),
      ];
      if (filters.search) {
        const pattern = likePattern(filters.search);
        conditions.push(
          sql.fragment`(r.email ILIKE ${pattern} OR r.name ILIKE ${pattern} OR r.organisation ILIKE ${pattern})`,
        );
      }
      if (filters.tag) conditions.push(sql.fragment`${filters.tag} = ANY (r.tags)`);
      return db.any(sql.type(recipientRow)`
        SELECT ${recipientColumns} FROM recipients r ${recipientStats}
        WHERE ${sql.join(conditions, sql.fragment` AND `)}
        ORDER BY r.created_at DESC, r.id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },

    /** Applies the changes; false when another entry of the tenant already has the new address. */
    async update(tenant: Tenant, id: string, changes: RecipientChanges): Promise<boolean> {
      const sets = [
        changes.email !== undefined && sql.fragment`email = ${changes.email}`,
        changes.name !== undefined && sql.fragment`name = ${changes.name}`,
        changes.organisation !== undefined && sql.fragment`organisation = ${changes.organisation}`,
        changes.tags !== undefined && sql.fragment`tags = ${sql.array(changes.tags, 'text')}`,
      ].filter((s) => s !== false);
      if (sets.length === 0) return true;
      if (changes.email !== undefined) {
        const taken = await db.maybeOne(sql.type(z.object({ id: z.uuid() }))`
          SELECT id FROM recipients
          WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
            AND lower(email) = lower(${changes.email}) AND id <> ${id}`);
        if (taken) return false;
      }
      await db.query(sql.typeAlias('void')`
        UPDATE recipients SET ${sql.join(sets, sql.fragment`, `)}, updated_at = ms_now()
        WHERE id = ${id} AND workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}`);
      return true;
    },

    async remove(tenant: Tenant, id: string): Promise<boolean> {
      const removed = await db.maybeOne(sql.type(z.object({ id: z.uuid() }))`
        DELETE FROM recipients
        WHERE id = ${id} AND workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
        RETURNING id`);
      return removed !== null;
    },

    // ---- Personal links ----

    async insertLink(
      tenant: Tenant,
      link: { transferId: string; recipientId: string; email: string; position: number; shareCode: string },
    ): Promise<void> {
      await db.query(sql.typeAlias('void')`
        INSERT INTO transfer_recipients (workspace_id, environment, transfer_id, recipient_id, email, position,
          share_code)
        VALUES (${tenant.workspaceId}, ${tenant.environment}, ${link.transferId}, ${link.recipientId}, ${link.email},
          ${link.position}, ${link.shareCode})`);
    },

    /** The personal links of the tenant's transfers, in the order the addresses were given. */
    async linksOf(tenant: Tenant, transferIds: readonly string[]): Promise<readonly TransferRecipientRow[]> {
      if (transferIds.length === 0) return [];
      return db.any(sql.type(transferRecipientRow)`
        SELECT ${linkColumns} FROM transfer_recipients l
        WHERE l.transfer_id = ANY (${sql.array(transferIds, 'uuid')})
          AND l.workspace_id = ${tenant.workspaceId} AND l.environment = ${tenant.environment}
        ORDER BY l.transfer_id, l.position`);
    },

    /** For the worker, which already knows the transfer: its links. */
    async linksOfTransfer(transferId: string): Promise<readonly TransferRecipientRow[]> {
      return db.any(sql.type(transferRecipientRow)`
        SELECT ${linkColumns} FROM transfer_recipients l WHERE l.transfer_id = ${transferId} ORDER BY l.position`);
    },

    async markMailed(linkId: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE transfer_recipients SET mailed_at = ms_now() WHERE id = ${linkId} AND mailed_at IS NULL`);
    },

    /** The personal link a share code names, or null (the code is a transfer's own, or nothing). */
    async findLinkByCode(shareCode: string): Promise<PersonalLink | null> {
      return db.maybeOne(sql.type(personalLinkRow)`
        SELECT id, transfer_id, recipient_id, email FROM transfer_recipients WHERE share_code = ${shareCode}`);
    },

    async findLink(linkId: string): Promise<PersonalLink | null> {
      if (!z.uuid().safeParse(linkId).success) return null;
      return db.maybeOne(sql.type(personalLinkRow)`
        SELECT id, transfer_id, recipient_id, email FROM transfer_recipients WHERE id = ${linkId}`);
    },

    // ---- Deliveries through personal links ----

    /** Opens a grant issued through a personal link: the files it names, none delivered yet. */
    async openGrant(linkId: string, grantId: string, files: readonly { id: string; size: number }[]): Promise<void> {
      await db.query(sql.typeAlias('void')`
        INSERT INTO recipient_grants (grant_id, transfer_recipient_id) VALUES (${grantId}, ${linkId})`);
      for (const file of files) {
        await db.query(sql.typeAlias('void')`
          INSERT INTO recipient_deliveries (grant_id, file_id, size) VALUES (${grantId}, ${file.id}, ${file.size})`);
      }
    },

    /**
     * Records one response of a grant's link for a file: `bytes` sent from byte `start`. They extend the
     * gap-free prefix only when they start inside it. When `finished` (the response handed its last
     * byte to the network) and the prefix now covers the file, the file is delivered, once. Run it in a
     * transaction: the grant stays locked until it ends. Null when the grant does not name the file.
     */
    async recordResponse(
      grantId: string,
      fileId: string,
      response: { start: number; bytes: number; finished: boolean },
    ): Promise<{ fileCompleted: boolean; grantCompleted: boolean } | null> {
      const grant = await db.maybeOne(sql.type(z.object({ completed: z.boolean() }))`
        SELECT completed_at IS NOT NULL AS completed FROM recipient_grants WHERE grant_id = ${grantId} FOR UPDATE`);
      if (!grant) return null;
      const start = sql.fragment`${response.start}::bigint`;
      const end = sql.fragment`(${response.start}::bigint + ${response.bytes}::bigint)`;
      const file = await db.maybeOne(sql.type(z.object({ newly_completed: z.boolean() }))`
        WITH before AS (
          SELECT completed_at FROM recipient_deliveries WHERE grant_id = ${grantId} AND file_id = ${fileId}
        )
        UPDATE recipient_deliveries d SET
          delivered_through = CASE WHEN ${start} <= d.delivered_through
            THEN least(d.size, greatest(d.delivered_through, ${end}))
            ELSE d.delivered_through END,
          completed_at = CASE
            WHEN d.completed_at IS NULL AND ${response.finished}::boolean AND ${start} <= d.delivered_through
              AND ${end} >= d.size
            THEN ms_now() ELSE d.completed_at END
        FROM before
        WHERE d.grant_id = ${grantId} AND d.file_id = ${fileId}
        RETURNING (before.completed_at IS NULL AND d.completed_at IS NOT NULL) AS newly_completed`);
      if (!file) return null;
      if (!file.newly_completed || grant.completed)
        return { fileCompleted: file.newly_completed, grantCompleted: false };
      const completed = await db.maybeOne(sql.type(z.object({ grant_id: z.uuid() }))`
        UPDATE recipient_grants g SET completed_at = ms_now()
        WHERE g.grant_id = ${grantId} AND g.completed_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM recipient_deliveries d WHERE d.grant_id = g.grant_id AND d.completed_at IS NULL)
        RETURNING g.grant_id`);
      return { fileCompleted: true, grantCompleted: completed !== null };
    },

    /** Counts a completed download for the link; its new count. */
    async countCompletedDownload(linkId: string): Promise<number> {
      return db.oneFirst(sql.type(z.object({ downloads_completed: z.number().int() }))`
        UPDATE transfer_recipients
        SET downloads_completed = downloads_completed + 1, last_downloaded_at = ms_now()
        WHERE id = ${linkId}
        RETURNING downloads_completed`);
    },

    async grantFiles(grantId: string): Promise<readonly string[]> {
      return db.anyFirst(sql.type(z.object({ file_id: z.uuid() }))`
        SELECT file_id FROM recipient_deliveries WHERE grant_id = ${grantId} ORDER BY file_id`);
    },
  };
}
