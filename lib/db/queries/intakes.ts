import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import {
  INTAKE_CLOSE_REASONS,
  INTAKE_DOCUMENT_STATUSES,
  INTAKE_ENCRYPTION_MODES,
  INTAKE_KEMS,
  INTAKE_SOURCES,
  INTAKE_STATUSES,
  type IntakeDocumentStatus,
  type IntakeEncryptionMode,
  type IntakeKem,
  type IntakeSource,
  type IntakeStatus,
  METADATA_POLICIES,
  type MetadataPolicy,
} from '../../intakes/vocabulary.ts';
import type { PageWindow } from '../../pagination.ts';
import type { Tenant } from '../../tenancy.ts';
import { ENVIRONMENTS } from '../../vocabulary.ts';
import { olderThanCursor } from '../paging.ts';
import { sql } from '../sql.ts';
import { storedFileColumns, storedFileRow } from './stored-files.ts';

// Rows and SQL of the intake tables (migrations/0014_intakes.sql, docs/intakes.md).
// What a request can reach is filtered by workspace and environment; the
// `…ById` reads serve workers and signed tokens, which already prove their target.

export const intakeRow = z.object({
  id: z.string(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  user_id: z.uuid(),
  title: z.string(),
  instructions: z.string().nullable(),
  status: z.enum(INTAKE_STATUSES),
  closed_reason: z.enum(INTAKE_CLOSE_REASONS).nullable(),
  encryption_mode: z.enum(INTAKE_ENCRYPTION_MODES),
  owner_kem: z.enum(INTAKE_KEMS).nullable(),
  owner_public_key: z.instanceof(Buffer).nullable(),
  metadata_policy: z.enum(METADATA_POLICIES),
  retention_hours: z.number(),
  max_files: z.number().int(),
  max_bytes: z.coerce.number().int(),
  max_submissions: z.number().int().nullable(),
  submissions_per_hour: z.number().int().nullable(),
  submissions_per_day: z.number().int().nullable(),
  submissions_count: z.number().int(),
  notify_emails: z.array(z.string()),
  expires_at: z.date().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
  closed_at: z.date().nullable(),
  deleted_at: z.date().nullable(),
});
export type IntakeRow = z.infer<typeof intakeRow>;

export const publishableKeyRow = z.object({
  id: z.uuid(),
  intake_id: z.string(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  label: z.string().nullable(),
  key_hash: z.string(),
  key_sealed: z.string(),
  key_prefix: z.string(),
  created_at: z.date(),
  last_used_at: z.date().nullable(),
  revoked_at: z.date().nullable(),
});
export type PublishableKeyRow = z.infer<typeof publishableKeyRow>;

export const intakeDocumentRow = z.object({
  id: z.string(),
  intake_id: z.string(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  status: z.enum(INTAKE_DOCUMENT_STATUSES),
  source: z.enum(INTAKE_SOURCES),
  publishable_key_id: z.uuid().nullable(),
  client_reference: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  kem: z.enum(INTAKE_KEMS).nullable(),
  wrapped_symmetric_key: z.string().nullable(),
  chunk_size: z.number().int().nullable(),
  upload_deadline: z.date(),
  retention_until: z.date().nullable(),
  created_at: z.date(),
  received_at: z.date().nullable(),
  deleted_at: z.date().nullable(),
});
export type IntakeDocumentRow = z.infer<typeof intakeDocumentRow>;

export const intakeFileRow = storedFileRow.extend({
  document_id: z.string(),
  position: z.number().int(),
  plaintext_size: z.coerce.number().int(),
  iv: z.string().nullable(),
});
export type IntakeFileRow = z.infer<typeof intakeFileRow>;

const intakeColumns = sql.fragment`
  id, workspace_id, environment, user_id, title, instructions, status, closed_reason, encryption_mode,
  owner_kem, owner_public_key, metadata_policy, retention_hours, max_files, max_bytes, max_submissions,
  submissions_per_hour, submissions_per_day, submissions_count, notify_emails, expires_at, created_at, updated_at, closed_at, deleted_at`;

const keyColumns = sql.fragment`
  id, intake_id, workspace_id, environment, label, key_hash, key_sealed, key_prefix, created_at, last_used_at,
  revoked_at`;

const documentColumns = sql.fragment`
  id, intake_id, workspace_id, environment, status, source, publishable_key_id, client_reference, metadata, kem,
  wrapped_symmetric_key, chunk_size, upload_deadline, retention_until, created_at, received_at, deleted_at`;

const fileColumns = sql.fragment`${storedFileColumns}, document_id, position, plaintext_size, iv`;

export type NewIntake = Tenant & {
  id: string;
  userId: string;
  title: string;
  instructions: string | null;
  encryptionMode: IntakeEncryptionMode;
  ownerKey: { kem: IntakeKem; publicKey: Buffer } | null;
  metadataPolicy: MetadataPolicy;
  retentionHours: number;
  maxFiles: number;
  maxBytes: number;
  maxSubmissions: number | null;
  submissionsPerHour: number | null;
  submissionsPerDay: number | null;
  notifyEmails: string[];
  expiresAt: Date | null;
};

export type IntakeChanges = {
  title?: string | undefined;
  instructions?: string | null | undefined;
  metadataPolicy?: MetadataPolicy | undefined;
  retentionHours?: number | undefined;
  maxFiles?: number | undefined;
  maxBytes?: number | undefined;
  maxSubmissions?: number | null | undefined;
  submissionsPerHour?: number | null | undefined;
  submissionsPerDay?: number | null | undefined;
  notifyEmails?: string[] | undefined;
  expiresAt?: Date | null | undefined;
};

export type NewDocument = Tenant & {
  id: string;
  intakeId: string;
  source: IntakeSource;
  publishableKeyId: string;
  clientReference: string | null;
  metadata: Record<string, unknown> | null;
  envelope: { kem: IntakeKem; wrappedSymmetricKey: string; chunkSize: number } | null;
  uploadDeadline: Date;
};

export type NewIntakeFile = {
  position: number;
  name: string;
  size: number;
  plaintextSize: number;
  mimeType: string;
  iv: string | null;
  objectKey: string;
  encryptedSize: number;
};

const inTenant = (tenant: Tenant) =>
  sql.fragment`workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}`;

export function createIntakeQueries(db: CommonQueryMethods) {
  return {
    async insert(intake: NewIntake): Promise<IntakeRow> {
      return db.one(sql.type(intakeRow)`
        INSERT INTO intakes (id, workspace_id, environment, user_id, title, instructions, encryption_mode, owner_kem,
          owner_public_key, metadata_policy, retention_hours, max_files, max_bytes, max_submissions,
          submissions_per_hour, submissions_per_day, notify_emails, expires_at)
        VALUES (${intake.id}, ${intake.workspaceId}, ${intake.environment}, ${intake.userId}, ${intake.title},
          ${intake.instructions}, ${intake.encryptionMode}, ${intake.ownerKey?.kem ?? null},
          ${intake.ownerKey ? sql.binary(intake.ownerKey.publicKey) : null}, ${intake.metadataPolicy},
          ${intake.retentionHours}, ${intake.maxFiles}, ${intake.maxBytes}, ${intake.maxSubmissions},
          ${intake.submissionsPerHour}, ${intake.submissionsPerDay}, ${sql.array(intake.notifyEmails, 'text')},
          ${intake.expiresAt ? sql.timestamp(intake.expiresAt) : null})
        RETURNING ${intakeColumns}`);
    },

    /** A live (not deleted) intake of the tenant; `forUpdate` locks it until the transaction ends. */
    async find(tenant: Tenant, id: string, forUpdate = false): Promise<IntakeRow | null> {
      return db.maybeOne(sql.type(intakeRow)`
        SELECT ${intakeColumns} FROM intakes
        WHERE id = ${id} AND ${inTenant(tenant)} AND status <> 'deleted'
        ${forUpdate ? sql.fragment`FOR UPDATE` : sql.fragment``}`);
    },

    /**
     * The intake as its latest writer leaves it: waits for a transaction changing it to commit (a
     * shared lock), so a workflow told of a change from inside that transaction reads the change.
     */
    async findCommitted(id: string): Promise<IntakeRow | null> {
      return db.maybeOne(sql.type(intakeRow)`SELECT ${intakeColumns} FROM intakes WHERE id = ${id} FOR SHARE`);
    },

    async findById(id: string, forUpdate = false): Promise<IntakeRow | null> {
      return db.maybeOne(sql.type(intakeRow)`
        SELECT ${intakeColumns} FROM intakes WHERE id = ${id} ${forUpdate ? sql.fragment`FOR UPDATE` : sql.fragment``}`);
    },

    async list(tenant: Tenant, filter: { status?: IntakeStatus | undefined }, window: PageWindow) {
      const status = filter.status ? sql.fragment`status = ${filter.status}` : sql.fragment`status <> 'deleted'`;
      return db.any(sql.type(intakeRow)`
        SELECT ${intakeColumns} FROM intakes i
        WHERE ${inTenant(tenant)} AND ${status} AND ${olderThanCursor(window, 'i')}
        ORDER BY created_at DESC, id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },

    async update(id: string, changes: IntakeChanges): Promise<IntakeRow> {
      const sets = [
        changes.title !== undefined && sql.fragment`title = ${changes.title}`,
        changes.instructions !== undefined && sql.fragment`instructions = ${changes.instructions}`,
        changes.metadataPolicy !== undefined && sql.fragment`metadata_policy = ${changes.metadataPolicy}`,
        changes.retentionHours !== undefined && sql.fragment`retention_hours = ${changes.retentionHours}`,
        changes.maxFiles !== undefined && sql.fragment`max_files = ${changes.maxFiles}`,
        changes.maxBytes !== undefined && sql.fragment`max_bytes = ${changes.maxBytes}`,
        changes.maxSubmissions !== undefined && sql.fragment`max_submissions = ${changes.maxSubmissions}`,
        changes.submissionsPerHour !== undefined && sql.fragment`submissions_per_hour = ${changes.submissionsPerHour}`,
        changes.submissionsPerDay !== undefined && sql.fragment`submissions_per_day = ${changes.submissionsPerDay}`,
        changes.notifyEmails !== undefined && sql.fragment`notify_emails = ${sql.array(changes.notifyEmails, 'text')}`,
        changes.expiresAt !== undefined &&
          sql.fragment`expires_at = ${changes.expiresAt ? sql.timestamp(changes.expiresAt) : null}`,
      ].filter((set) => set !== false);
      return db.one(sql.type(intakeRow)`
        UPDATE intakes SET ${sql.join([...sets, sql.fragment`updated_at = ms_now()`], sql.fragment`, `)}
        WHERE id = ${id} RETURNING ${intakeColumns}`);
    },

    /** Moves an open intake to `status`; null when it was no longer open. */
    async end(
      id: string,
      status: Extract<IntakeStatus, 'closed' | 'expired'>,
      reason: IntakeRow['closed_reason'],
    ): Promise<IntakeRow | null> {
      return db.maybeOne(sql.type(intakeRow)`
        UPDATE intakes
        SET status = ${status}, closed_reason = ${reason}, closed_at = ms_now(), updated_at = ms_now()
        WHERE id = ${id} AND status = 'open'
        RETURNING ${intakeColumns}`);
    },

    /** Reopens a closed intake when its owner lifts the reason (a later expiry, more submissions). */
    async reopen(id: string): Promise<IntakeRow | null> {
      return db.maybeOne(sql.type(intakeRow)`
        UPDATE intakes SET status = 'open', closed_reason = NULL, closed_at = NULL, updated_at = ms_now()
        WHERE id = ${id} AND status IN ('closed', 'expired') RETURNING ${intakeColumns}`);
    },

    async markDeleted(id: string): Promise<IntakeRow | null> {
      return db.maybeOne(sql.type(intakeRow)`
        UPDATE intakes SET status = 'deleted', deleted_at = ms_now(), updated_at = ms_now()
        WHERE id = ${id} AND status <> 'deleted' RETURNING ${intakeColumns}`);
    },

    /**
     * Submissions the intake took in the last `windowMs`, and when the oldest of them leaves the
     * window (null when there are none): a budget spent frees up then.
     */
    async recentSubmissions(id: string, windowMs: number): Promise<{ count: number; frees_at: Date | null }> {
      return db.one(sql.type(z.object({ count: z.number().int(), frees_at: z.date().nullable() }))`
        SELECT count(*)::int AS count, min(created_at) + make_interval(secs => ${windowMs / 1000}) AS frees_at
        FROM intake_documents
        WHERE intake_id = ${id} AND created_at > ms_now() - make_interval(secs => ${windowMs / 1000})`);
    },

    /**
     * Records that `documentId`'s "submission received" mail goes out now, unless its intake has
     * sent `perHour` of them in the last hour; true when it may go (or had already gone: a retry).
     * The intake is locked so that concurrent documents count one at a time: call it on a transaction.
     */
    async claimNotice(documentId: string, intakeId: string, perHour: number): Promise<boolean> {
      await db.query(sql.typeAlias('void')`SELECT FROM intakes WHERE id = ${intakeId} FOR UPDATE`);
      const claimed = await db.maybeOne(sql.type(z.object({ id: z.string() }))`
        UPDATE intake_documents SET notified_at = COALESCE(notified_at, ms_now())
        WHERE id = ${documentId} AND (notified_at IS NOT NULL OR (
          SELECT count(*) FROM intake_documents
          WHERE intake_id = ${intakeId} AND notified_at > ms_now() - interval '1 hour') < ${perHour})
        RETURNING id`);
      return claimed !== null;
    },

    async countSubmission(id: string): Promise<IntakeRow> {
      return db.one(sql.type(intakeRow)`
        UPDATE intakes SET submissions_count = submissions_count + 1 WHERE id = ${id} RETURNING ${intakeColumns}`);
    },

    // Publishable keys

    async insertKey(
      key: Tenant & { intakeId: string; label: string | null; hash: string; sealed: string; prefix: string },
    ): Promise<PublishableKeyRow> {
      return db.one(sql.type(publishableKeyRow)`
        INSERT INTO intake_publishable_keys (intake_id, workspace_id, environment, label, key_hash, key_sealed,
          key_prefix)
        VALUES (${key.intakeId}, ${key.workspaceId}, ${key.environment}, ${key.label}, ${key.hash}, ${key.sealed},
          ${key.prefix})
        RETURNING ${keyColumns}`);
    },

    async keys(intakeId: string): Promise<readonly PublishableKeyRow[]> {
      return db.any(sql.type(publishableKeyRow)`
        SELECT ${keyColumns} FROM intake_publishable_keys WHERE intake_id = ${intakeId}
        ORDER BY created_at DESC, id DESC`);
    },

    async keyByHash(hash: string): Promise<PublishableKeyRow | null> {
      return db.maybeOne(sql.type(publishableKeyRow)`
        SELECT ${keyColumns} FROM intake_publishable_keys WHERE key_hash = ${hash}`);
    },

    async revokeKey(intakeId: string, keyId: string): Promise<PublishableKeyRow | null> {
      if (!z.uuid().safeParse(keyId).success) return null;
      return db.maybeOne(sql.type(publishableKeyRow)`
        UPDATE intake_publishable_keys SET revoked_at = COALESCE(revoked_at, ms_now())
        WHERE id = ${keyId} AND intake_id = ${intakeId} RETURNING ${keyColumns}`);
    },

    async touchKey(keyId: string): Promise<void> {
      // Once a minute is enough to say when a key was last used, and spares a write per request.
      await db.query(sql.typeAlias('void')`
        UPDATE intake_publishable_keys SET last_used_at = ms_now()
        WHERE id = ${keyId} AND (last_used_at IS NULL OR last_used_at < ms_now() - interval '1 minute')`);
    },

    // Documents and their files

    async insertDocument(doc: NewDocument): Promise<IntakeDocumentRow> {
      return db.one(sql.type(intakeDocumentRow)`
        INSERT INTO intake_documents (id, intake_id, workspace_id, environment, source, publishable_key_id,
          client_reference, metadata, kem, wrapped_symmetric_key, chunk_size, upload_deadline)
        VALUES (${doc.id}, ${doc.intakeId}, ${doc.workspaceId}, ${doc.environment}, ${doc.source},
          ${doc.publishableKeyId}, ${doc.clientReference}, ${doc.metadata ? sql.jsonb(doc.metadata as never) : null},
          ${doc.envelope?.kem ?? null}, ${doc.envelope?.wrappedSymmetricKey ?? null},
          ${doc.envelope?.chunkSize ?? null}, ${sql.timestamp(doc.uploadDeadline)})
        RETURNING ${documentColumns}`);
    },

    async insertFile(documentId: string, id: string, file: NewIntakeFile): Promise<IntakeFileRow> {
      return db.one(sql.type(intakeFileRow)`
        INSERT INTO intake_files (id, document_id, position, name, size, plaintext_size, mime_type, iv, object_key,
          encrypted_size)
        VALUES (${id}, ${documentId}, ${file.position}, ${file.name}, ${file.size}, ${file.plaintextSize},
          ${file.mimeType}, ${file.iv}, ${file.objectKey}, ${file.encryptedSize})
        RETURNING ${fileColumns}`);
    },

    /** A document of a live intake of the tenant, deleted ones included (they answer 410). */
    async findDocument(tenant: Tenant, intakeId: string, documentId: string): Promise<IntakeDocumentRow | null> {
      return db.maybeOne(sql.type(intakeDocumentRow)`
        SELECT ${documentColumns} FROM intake_documents
        WHERE id = ${documentId} AND intake_id = ${intakeId} AND ${inTenant(tenant)}`);
    },

    async documentById(id: string): Promise<IntakeDocumentRow | null> {
      return db.maybeOne(sql.type(intakeDocumentRow)`SELECT ${documentColumns} FROM intake_documents WHERE id = ${id}`);
    },

    async listDocuments(
      tenant: Tenant,
      intakeId: string,
      filter: { status?: IntakeDocumentStatus | undefined },
      window: PageWindow,
    ): Promise<readonly IntakeDocumentRow[]> {
      const status = filter.status ? sql.fragment`status = ${filter.status}` : sql.fragment`TRUE`;
      return db.any(sql.type(intakeDocumentRow)`
        SELECT ${documentColumns} FROM intake_documents d
        WHERE intake_id = ${intakeId} AND ${inTenant(tenant)} AND ${status} AND ${olderThanCursor(window, 'd')}
        ORDER BY created_at DESC, id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },

    async liveDocumentIds(intakeId: string): Promise<readonly string[]> {
      return db.anyFirst(sql.type(z.object({ id: z.string() }))`
        SELECT id FROM intake_documents WHERE intake_id = ${intakeId} AND status <> 'deleted'`);
    },

    async files(documentIds: readonly string[]): Promise<readonly IntakeFileRow[]> {
      if (documentIds.length === 0) return [];
      return db.any(sql.type(intakeFileRow)`
        SELECT ${fileColumns} FROM intake_files WHERE document_id = ANY(${sql.array(documentIds, 'text')})
        ORDER BY document_id, position`);
    },

    async file(fileId: string): Promise<IntakeFileRow | null> {
      if (!z.uuid().safeParse(fileId).success) return null;
      return db.maybeOne(sql.type(intakeFileRow)`SELECT ${fileColumns} FROM intake_files WHERE id = ${fileId}`);
    },

    /** Moves a document from `from` to `to`; null when it was not in `from` (someone moved it first). */
    async moveDocument(
      id: string,
      from: readonly IntakeDocumentStatus[],
      to: IntakeDocumentStatus,
    ): Promise<IntakeDocumentRow | null> {
      return db.maybeOne(sql.type(intakeDocumentRow)`
        UPDATE intake_documents SET status = ${to}
        WHERE id = ${id} AND status = ANY(${sql.array(from, 'text')})
        RETURNING ${documentColumns}`);
    },

    /** Every file stored: the document is `received` and its retention starts now. */
    async receive(id: string): Promise<IntakeDocumentRow | null> {
      return db.maybeOne(sql.type(intakeDocumentRow)`
        UPDATE intake_documents
        SET status = 'received', received_at = ms_now(),
            retention_until = date_trunc('milliseconds', ms_now() + interval '1 hour' *
              (SELECT retention_hours FROM intakes WHERE intakes.id = intake_documents.intake_id))
        WHERE id = ${id} AND status = 'uploading'
        RETURNING ${documentColumns}`);
    },

    async recordFileScan(
      fileId: string,
      scan: { sha256: string; scanStatus: IntakeFileRow['scan_status']; signature: string | null },
    ): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE intake_files SET sha256 = ${scan.sha256}, scan_status = ${scan.scanStatus},
          scan_signature = ${scan.signature}
        WHERE id = ${fileId}`);
    },

    /** Infected content: the document is `rejected` and its files' keys destroyed in one statement. */
    async rejectDocument(id: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        WITH rejected AS (
          UPDATE intake_documents SET status = 'rejected' WHERE id = ${id} AND status = 'processing' RETURNING id)
        UPDATE intake_files SET data_key_wrapped = NULL WHERE document_id = ${id}`);
    },

    /**
     * Deletes a document: its keys go in the same statement (the sealed data keys, the wrapped
     * content key), so what is left in storage can no longer be opened, and a document is never
     * `deleted` with its files' keys kept (by a crash between two statements). The row stays,
     * `deleted`, so that its route answers 410. Again on a deleted document, it sheds any key left.
     */
    async destroyDocument(id: string): Promise<IntakeDocumentRow | null> {
      return db.maybeOne(sql.type(intakeDocumentRow)`
        WITH shredded AS (
          UPDATE intake_files SET data_key_wrapped = NULL, iv = NULL WHERE document_id = ${id})
        UPDATE intake_documents
        SET status = 'deleted', deleted_at = ms_now(), wrapped_symmetric_key = NULL, metadata = NULL
        WHERE id = ${id} AND status <> 'deleted'
        RETURNING ${documentColumns}`);
    },
  };
}
