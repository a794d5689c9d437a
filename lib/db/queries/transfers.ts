import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { PageWindow } from '../../pagination.ts';
import type { Tenant } from '../../tenancy.ts';
import {
  APPROVAL_STATUSES,
  type ApprovalDecision,
  ENCRYPTION_MODES,
  ENVIRONMENTS,
  type EncryptionMode,
  SCAN_STATUSES,
  type ScanStatus,
  TRANSFER_STATUSES,
  type TransferStatus,
} from '../../vocabulary.ts';
import { olderThanCursor } from '../paging.ts';
import { sql } from '../sql.ts';
import { storedFileRow } from './stored-files.ts';

const scanStatus = z.enum(SCAN_STATUSES).nullable();

export const transferRow = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  user_id: z.uuid(),
  short_code: z.string(),
  transfer_title: z.string().nullable(),
  status: z.enum(TRANSFER_STATUSES),
  status_reason: z.string().nullable(),
  encryption_mode: z.enum(ENCRYPTION_MODES),
  scan_status: scanStatus,
  expires_at: z.date(),
  upload_deadline: z.date(),
  max_downloads: z.number().int().nullable(),
  total_downloads: z.number().int(),
  password_hash: z.string().nullable(),
  recipient: z.string().nullable(),
  approval_required: z.boolean(),
  approval_status: z.enum(APPROVAL_STATUSES).nullable(),
  approved_at: z.date().nullable(),
  approved_by: z.uuid().nullable(),
  approval_note: z.string().nullable(),
  folder_id: z.uuid().nullable(),
  tags: z.array(z.string()),
  archived_at: z.date().nullable(),
  allowed_countries: z.array(z.string()).nullable(),
  created_at: z.date(),
  activated_at: z.date().nullable(),
  ended_at: z.date().nullable(),
});
export type TransferRow = z.infer<typeof transferRow>;

export const fileRow = storedFileRow.extend({ transfer_id: z.uuid(), position: z.number().int() });
export type FileRow = z.infer<typeof fileRow>;

export const transferColumns = sql.fragment`
  t.id, t.workspace_id, t.environment, t.user_id, t.short_code, t.transfer_title, t.status, t.status_reason,
  t.encryption_mode, t.scan_status, t.expires_at, t.upload_deadline, t.max_downloads, t.total_downloads,
  t.password_hash, t.recipient, t.approval_required, t.approval_status, t.approved_at, t.approved_by,
  t.approval_note, t.folder_id, t.tags, t.archived_at, t.allowed_countries, t.created_at, t.activated_at, t.ended_at`;

const fileColumns = sql.fragment`
  f.id, f.transfer_id, f.position, f.name, f.size, f.mime_type, f.object_key, f.upload_state,
  f.multipart_upload_id, f.parts, f.bytes_received, f.data_key_wrapped, f.nonce_prefix, f.encrypted_size,
  f.sha256, f.scan_status, f.scan_signature, f.uploaded_at, f.created_at`;

export type NewTransfer = Tenant & {
  id: string;
  userId: string;
  shortCode: string;
  title: string | null;
  encryptionMode: EncryptionMode;
  expiresAt: Date;
  uploadDeadline: Date;
  maxDownloads: number | null;
  passwordHash: string | null;
  recipient: string | null;
  approvalRequired: boolean;
  /** Null restricts nothing (docs/transfers.md, "Countries"). */
  allowedCountries: readonly string[] | null;
};

/** A file as its transfer is created: declared, without key material (made when its upload starts). */
export type NewFile = {
  id: string;
  position: number;
  name: string;
  size: number;
  mimeType: string;
  objectKey: string;
  encryptedSize: number;
};

export type TransferFilters = {
  status?: string | undefined;
  search?: string | undefined;
  tag?: string | undefined;
  /** false (the default list): not archived; true: archived only. */
  archived?: boolean | undefined;
};

const isUuid = (value: string) => z.uuid().safeParse(value).success;

export function createTransferQueries(db: CommonQueryMethods) {
  return {
    async insert(transfer: NewTransfer): Promise<TransferRow> {
      return db.one(sql.type(transferRow)`
        INSERT INTO transfers AS t (id, workspace_id, environment, user_id, short_code, transfer_title, status_reason,
          encryption_mode, expires_at, upload_deadline, max_downloads, password_hash, recipient, approval_required,
          approval_status, allowed_countries)
        VALUES (${transfer.id}, ${transfer.workspaceId}, ${transfer.environment}, ${transfer.userId}, ${transfer.shortCode},
          ${transfer.title}, 'uploading', ${transfer.encryptionMode}, ${sql.timestamp(transfer.expiresAt)},
          ${sql.timestamp(transfer.uploadDeadline)}, ${transfer.maxDownloads}, ${transfer.passwordHash},
          ${transfer.recipient}, ${transfer.approvalRequired}, ${transfer.approvalRequired ? 'pending' : null},
          ${transfer.allowedCountries ? sql.array([...transfer.allowedCountries], 'text') : null})
        RETURNING ${transferColumns}`);
    },

    /**
     * A new transfer's files, in one statement whatever their number (TRANSFER_MAX_FILES may be
     * raised: one INSERT per file took 24 s for 10,000 files), answered in position order.
     */
    async insertFiles(transferId: string, files: readonly NewFile[]): Promise<readonly FileRow[]> {
      const rows = files.map((f) => [f.id, f.position, f.name, f.size, f.mimeType, f.objectKey, f.encryptedSize]);
      return db.any(sql.type(fileRow)`
        WITH inserted AS (
          INSERT INTO transfer_files AS f (id, transfer_id, position, name, size, mime_type, object_key, encrypted_size)
          SELECT u.id, ${transferId}, u.position, u.name, u.size, u.mime_type, u.object_key, u.encrypted_size
          FROM ${sql.unnest(rows, ['uuid', 'int4', 'text', 'int8', 'text', 'text', 'int8'])}
            AS u(id, position, name, size, mime_type, object_key, encrypted_size)
          RETURNING ${fileColumns})
        SELECT * FROM inserted ORDER BY position`);
    },

    async find(tenant: Tenant, id: string): Promise<TransferRow | null> {
      return db.maybeOne(sql.type(transferRow)`
        SELECT ${transferColumns} FROM transfers t
        WHERE t.id = ${id} AND t.workspace_id = ${tenant.workspaceId} AND t.environment = ${tenant.environment}`);
    },

    async findForUpdate(tenant: Tenant, id: string): Promise<TransferRow | null> {
      return db.maybeOne(sql.type(transferRow)`
        SELECT ${transferColumns} FROM transfers t
        WHERE t.id = ${id} AND t.workspace_id = ${tenant.workspaceId} AND t.environment = ${tenant.environment}
        FOR UPDATE`);
    },

    /** By id alone: for workers and signed links that already prove which transfer they mean. */
    async findById(id: string): Promise<TransferRow | null> {
      // Ids from a token's payload are unchecked strings: what is not a uuid names nothing.
      if (!isUuid(id)) return null;
      return db.maybeOne(sql.type(transferRow)`SELECT ${transferColumns} FROM transfers t WHERE t.id = ${id}`);
    },

    async findByShortCode(shortCode: string): Promise<TransferRow | null> {
      return db.maybeOne(
        sql.type(transferRow)`SELECT ${transferColumns} FROM transfers t WHERE t.short_code = ${shortCode}`,
      );
    },

    async files(transferId: string): Promise<readonly FileRow[]> {
      return db.any(sql.type(fileRow)`
        SELECT ${fileColumns} FROM transfer_files f WHERE f.transfer_id = ${transferId} ORDER BY f.position`);
    },

    /** The files of several transfers in one query (list pages). */
    async filesOf(transferIds: readonly string[]): Promise<readonly FileRow[]> {
      if (transferIds.length === 0) return [];
      return db.any(sql.type(fileRow)`
        SELECT ${fileColumns} FROM transfer_files f
        WHERE f.transfer_id = ANY(${sql.array([...transferIds], 'uuid')})
        ORDER BY f.transfer_id, f.position`);
    },

    /** How many files each transfer has, by transfer id. */
    async countFiles(transferIds: readonly string[]): Promise<Map<string, number>> {
      if (transferIds.length === 0) return new Map();
      const rows = await db.any(sql.type(z.object({ transfer_id: z.uuid(), count: z.coerce.number() }))`
        SELECT transfer_id, count(*) AS count FROM transfer_files
        WHERE transfer_id = ANY (${sql.array(transferIds, 'uuid')})
        GROUP BY transfer_id`);
      return new Map(rows.map((row) => [row.transfer_id, row.count]));
    },

    async file(fileId: string): Promise<FileRow | null> {
      if (!isUuid(fileId)) return null;
      return db.maybeOne(sql.type(fileRow)`SELECT ${fileColumns} FROM transfer_files f WHERE f.id = ${fileId}`);
    },

    async list(tenant: Tenant, filters: TransferFilters, window: PageWindow): Promise<readonly TransferRow[]> {
      const pattern = filters.search ? `%${filters.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
      const conditions = [
        sql.fragment`t.workspace_id = ${tenant.workspaceId}`,
        sql.fragment`t.environment = ${tenant.environment}`,
        filters.status !== undefined && sql.fragment`t.status = ${filters.status}`,
        filters.tag !== undefined && sql.fragment`t.tags @> ${sql.array([filters.tag], 'text')}`,
        filters.archived === true ? sql.fragment`t.archived_at IS NOT NULL` : sql.fragment`t.archived_at IS NULL`,
        pattern !== null &&
          sql.fragment`(t.transfer_title ILIKE ${pattern} OR t.short_code ILIKE ${pattern} OR t.recipient ILIKE ${pattern})`,
        olderThanCursor(window, 't'),
      ].filter((c) => c !== false);
      return db.any(sql.type(transferRow)`
        SELECT ${transferColumns} FROM transfers t
        WHERE ${sql.join(conditions, sql.fragment` AND `)}
        ORDER BY t.created_at DESC, t.id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },

    /**
     * Serialises quota checks of one workspace and environment until the
     * transaction ends (a transaction-level advisory lock: released by commit
     * or rollback, never left behind).
     */
    async lockQuota(tenant: Tenant): Promise<void> {
      const key = `${tenant.workspaceId}:${tenant.environment}`;
      await db.one(sql.type(z.object({ locked: z.literal(true) }))`
        SELECT true AS locked FROM (SELECT pg_advisory_xact_lock(hashtext('transfer-quota'), hashtext(${key}))) AS lock`);
    },

    async countCreatedSince(tenant: Tenant, since: Date): Promise<number> {
      return db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
        SELECT count(*) AS count FROM transfers
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
          AND created_at >= ${sql.timestamp(since)}`);
    },

    /** Moves a transfer to a final state and destroys its data keys in the same statement. */
    async end(
      id: string,
      status: Extract<TransferStatus, 'expired' | 'deleted'>,
      reason: string,
    ): Promise<TransferRow | null> {
      const ended = await db.maybeOne(sql.type(transferRow)`
        UPDATE transfers t SET status = ${status}, status_reason = ${reason}, ended_at = ms_now()
        WHERE t.id = ${id} AND t.status NOT IN ('expired', 'deleted')
        RETURNING ${transferColumns}`);
      await db.query(
        sql.typeAlias('void')`UPDATE transfer_files SET data_key_wrapped = NULL WHERE transfer_id = ${id}`,
      );
      return ended;
    },

    /**
     * Makes a scanned transfer downloadable. An approval decision taken before
     * (while uploading or scanning) stands: only a transfer still undecided is pending.
     */
    async activate(id: string, scanStatus: ScanStatus): Promise<TransferRow | null> {
      return db.maybeOne(sql.type(transferRow)`
        UPDATE transfers t
        SET status = 'active', status_reason = NULL, scan_status = ${scanStatus}, activated_at = ms_now(),
            approval_status = CASE WHEN t.approval_required THEN COALESCE(t.approval_status, 'pending') END
        WHERE t.id = ${id} AND t.status = 'scanning'
        RETURNING ${transferColumns}`);
    },

    async setScanning(id: string, reason: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE transfers SET status_reason = ${reason}, scan_status = 'pending'
        WHERE id = ${id} AND status = 'scanning'`);
    },

    async setScanStatus(id: string, scanStatus: ScanStatus): Promise<void> {
      await db.query(sql.typeAlias('void')`UPDATE transfers SET scan_status = ${scanStatus} WHERE id = ${id}`);
    },

    async recordFileScan(
      fileId: string,
      result: { sha256: string | null; scanStatus: ScanStatus; signature: string | null },
    ) {
      await db.query(sql.typeAlias('void')`
        UPDATE transfer_files
        SET sha256 = COALESCE(${result.sha256}, sha256), scan_status = ${result.scanStatus},
            scan_signature = ${result.signature}
        WHERE id = ${fileId}`);
    },

    /** Counts a download if the cap allows; null when the cap is reached (atomic under concurrency). */
    async countDownload(id: string): Promise<TransferRow | null> {
      return db.maybeOne(sql.type(transferRow)`
        UPDATE transfers t SET total_downloads = total_downloads + 1
        WHERE t.id = ${id} AND t.status = 'active' AND (t.max_downloads IS NULL OR t.total_downloads < t.max_downloads)
        RETURNING ${transferColumns}`);
    },

    async recordDownload(id: string, ip: string | null, userAgent: string | null): Promise<void> {
      await db.query(sql.typeAlias('void')`
        INSERT INTO transfer_downloads (transfer_id, ip_address, user_agent) VALUES (${id}, ${ip}, ${userAgent})`);
    },

    async decideApproval(id: string, decision: ApprovalDecision, approverId: string, note: string | null) {
      const row = await db.one(sql.type(transferRow)`
        UPDATE transfers t
        SET approval_status = ${decision}, approved_by = ${approverId}, approval_note = ${note},
            approved_at = CASE WHEN ${decision}::text = 'approved' THEN ms_now() ELSE NULL END
        WHERE t.id = ${id}
        RETURNING ${transferColumns}`);
      await db.query(sql.typeAlias('void')`
        INSERT INTO transfer_approvals (transfer_id, approver_id, decision, note, decided_at)
        VALUES (${id}, ${approverId}, ${decision}, ${note}, ms_now())
        ON CONFLICT (transfer_id) DO UPDATE
        SET approver_id = EXCLUDED.approver_id, decision = EXCLUDED.decision, note = EXCLUDED.note,
            decided_at = EXCLUDED.decided_at`);
      return row;
    },

    /** Changes what the sender may change after creation; null when the transfer is not the tenant's. */
    async update(tenant: Tenant, id: string, change: { allowedCountries: readonly string[] | null }) {
      const countries = change.allowedCountries ? sql.array([...change.allowedCountries], 'text') : null;
      return db.maybeOne(sql.type(transferRow)`
        UPDATE transfers AS t SET allowed_countries = ${countries}
        WHERE t.id = ${id} AND t.workspace_id = ${tenant.workspaceId} AND t.environment = ${tenant.environment}
        RETURNING ${transferColumns}`);
    },

    async setFolder(id: string, folderId: string | null): Promise<void> {
      await db.query(sql.typeAlias('void')`UPDATE transfers SET folder_id = ${folderId} WHERE id = ${id}`);
    },

    /** Adds or removes one tag; null when the set already was as asked (nothing changed). */
    async retag(id: string, tag: string, change: 'add' | 'remove'): Promise<TransferRow | null> {
      const tags =
        change === 'add' ? sql.fragment`array_append(t.tags, ${tag})` : sql.fragment`array_remove(t.tags, ${tag})`;
      const wanted = change === 'add' ? sql.fragment`NOT (${tag} = ANY (t.tags))` : sql.fragment`${tag} = ANY (t.tags)`;
      return db.maybeOne(sql.type(transferRow)`
        UPDATE transfers AS t SET tags = ${tags} WHERE t.id = ${id} AND ${wanted}
        RETURNING ${transferColumns}`);
    },

    /** Null when it was archived already. */
    async archive(id: string): Promise<TransferRow | null> {
      return db.maybeOne(sql.type(transferRow)`
        UPDATE transfers AS t SET archived_at = ms_now() WHERE t.id = ${id} AND t.archived_at IS NULL
        RETURNING ${transferColumns}`);
    },

    async extendExpiry(id: string, expiresAt: Date): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE transfers SET expires_at = ${sql.timestamp(expiresAt)} WHERE id = ${id}`);
    },
  };
}
