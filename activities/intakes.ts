import { ApplicationFailure } from '@temporalio/activity';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import type { Config } from '../lib/config.ts';
import type { Keyring } from '../lib/crypto/key-wrap.ts';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { createIntakeQueries, type IntakeDocumentRow, type IntakeRow } from '../lib/db/queries/intakes.ts';
import { createLeftoverObjectQueries } from '../lib/db/queries/leftover-objects.ts';
import { requestView, submissionView } from '../lib/events/intake-events.ts';
import type { Semaphore } from '../lib/in-parallel.ts';
import { intakeDocumentObjects } from '../lib/intakes/family.ts';
import type { Mailer } from '../lib/mail/mailer.ts';
import { intakeReceivedMail } from '../lib/mail/templates.ts';
import type { Scanner } from '../lib/scan/clamd.ts';
import type { ObjectStore } from '../lib/storage/object-store.ts';
import { lifecycleActivities } from './lifecycles.ts';
import { removeBlob, scanAndRecord } from './stored-files.ts';

export type IntakeActivityDeps = {
  config: Config;
  db: DatabasePool;
  objects: ObjectStore;
  keyring: Keyring;
  scanner: Scanner;
  /** Absent: scans are not queued for clamd (tests with a clamd of their own). */
  scanSlots?: Semaphore;
  mailer: Mailer;
};

/** What a document's workflow needs to know at its start. */
export type DocumentPlan = {
  mode: IntakeRow['encryption_mode'];
  fileIds: string[];
  uploadedFileIds: string[];
  uploadDeadline: string;
  status: IntakeDocumentRow['status'];
  retentionUntil: string | null;
};

// Every activity is idempotent: transitions are guarded UPDATEs that match
// once, object removals succeed on missing objects, a rescan gives the same
// answer. Temporal may retry any of them at any point.
export function createIntakeActivities(deps: IntakeActivityDeps) {
  const { db, objects } = deps;
  const intakes = createIntakeQueries(db);

  /**
   * A document and its intake. Missing is final, except for a workflow's first look, which may
   * come before the commit that created the document (`firstLook`): then it is retried.
   */
  async function mustLoad(documentId: string, firstLook = false) {
    const document = await intakes.documentById(documentId);
    if (!document) {
      throw firstLook
        ? ApplicationFailure.retryable(`document ${documentId} is not visible yet`, 'NotVisibleYet')
        : ApplicationFailure.nonRetryable(`document ${documentId} does not exist`, 'NotFound');
    }
    const intake = await intakes.findById(document.intake_id);
    if (!intake) throw ApplicationFailure.nonRetryable(`intake ${document.intake_id} does not exist`, 'NotFound');
    return { document, intake };
  }

  const tenantOf = (row: IntakeDocumentRow) => ({ workspaceId: row.workspace_id, environment: row.environment });

  async function recordReceived(tx: CommonQueryMethods, document: IntakeDocumentRow) {
    const queries = createIntakeQueries(tx);
    const intake = await queries.findById(document.intake_id);
    if (!intake) return;
    const files = await queries.files([document.id]);
    await createEventQueries(tx).record(tenantOf(document), 'request.submission_received', {
      request: requestView(intake),
      submission: submissionView(document, files),
    });
  }

  // The names the intake workflows started before `ownerExpiry` and `fileLifecycle` call (their
  // wrappers in workflows/intakeLifecycle.ts, intakeDocumentLifecycle.ts): remove with them.
  const legacy = {
    async loadDocumentPlan(documentId: string): Promise<DocumentPlan> {
      const { document, intake } = await mustLoad(documentId, true);
      const files = await intakes.files([documentId]);
      return {
        mode: intake.encryption_mode,
        fileIds: files.map((file) => file.id),
        uploadedFileIds: files.filter((file) => file.upload_state === 'uploaded').map((file) => file.id),
        uploadDeadline: document.upload_deadline.toISOString(),
        status: document.status,
        retentionUntil: document.retention_until?.toISOString() ?? null,
      };
    },

    /** Every file is stored: `received`, retention starts, `request.submission_received` is recorded. */
    async receiveDocument(documentId: string): Promise<string> {
      const received = await db.transaction(async (tx) => {
        const moved = await createIntakeQueries(tx).receive(documentId);
        if (moved) await recordReceived(tx, moved);
        return moved;
      });
      const document = received ?? (await mustLoad(documentId)).document;
      if (!document.retention_until) {
        throw ApplicationFailure.nonRetryable(`document ${documentId} is ${document.status}`, 'NotReceivable');
      }
      return document.retention_until.toISOString();
    },

    async notifyDocumentReceived(documentId: string): Promise<void> {
      const { document, intake } = await mustLoad(documentId);
      if (document.status === 'deleted' || intake.notify_emails.length === 0) return;
      // Each submission would mail every notify address: past INTAKE_NOTICES_PER_HOUR notices of the
      // intake in the last hour, this one is not mailed (the documents list and its event show it).
      const { noticesPerHour } = deps.config.intakes;
      const mailed = await db.transaction((tx) =>
        createIntakeQueries(tx).claimNotice(documentId, intake.id, noticesPerHour),
      );
      if (!mailed) return;
      const files = await intakes.files([documentId]);
      for (const to of intake.notify_emails) {
        await deps.mailer.send(
          intakeReceivedMail({
            to,
            intakeTitle: intake.title,
            documentId,
            clientReference: document.client_reference,
            fileCount: files.length,
            endToEnd: intake.encryption_mode === 'e2e_asym',
          }),
        );
      }
    },

    async beginDocumentScan(documentId: string): Promise<void> {
      await intakes.moveDocument(documentId, ['received'], 'processing');
    },

    async scanIntakeFile(fileId: string): Promise<string> {
      const file = await intakes.file(fileId);
      if (!file) throw ApplicationFailure.nonRetryable(`file ${fileId} does not exist`, 'NotFound');
      if (file.scan_status && file.scan_status !== 'pending') return file.scan_status;
      if (!file.data_key_wrapped) return 'destroyed';
      return scanAndRecord(deps, file, (scan) => intakes.recordFileScan(file.id, scan));
    },

    /** Infected content is destroyed (`rejected`); anything else becomes `available`. Answers the status after. */
    async settleDocumentScan(documentId: string): Promise<IntakeDocumentRow['status']> {
      const files = await intakes.files([documentId]);
      if (files.some((file) => file.scan_status === 'infected')) await intakes.rejectDocument(documentId);
      else await intakes.moveDocument(documentId, ['processing'], 'available');
      // Deleted meanwhile by its owner, or settled by an earlier try of this activity: the row says.
      return (await mustLoad(documentId)).document.status;
    },

    /**
     * A file that cannot be verified, ever (its scan failed for good: its content no longer matches
     * its upload): the document is `rejected` and its keys destroyed, as for infected content.
     */
    async rejectUnverifiedDocument(documentId: string): Promise<void> {
      await intakes.rejectDocument(documentId);
    },

    /** Retention ended, or the upload never finished: keys destroyed, the row kept as a tombstone. */
    async destroyDocument(documentId: string): Promise<void> {
      await intakes.destroyDocument(documentId);
    },

    /** Removes a document's blobs and any unfinished multipart upload; missing objects are fine. */
    async purgeDocumentBlobs(documentId: string): Promise<void> {
      for (const file of await intakes.files([documentId])) await removeBlob(objects, file);
      // Done: the sweeper (lib/storage/sweeper.ts) need not come back for them.
      await createLeftoverObjectQueries(db).markDeleted(intakeDocumentObjects, documentId);
    },

    async loadIntakeExpiry(intakeId: string): Promise<{ status: IntakeRow['status']; expiresAt: string | null }> {
      // Started or signalled inside the creating (or updating) transaction: not found yet is
      // retryable, and a change not yet committed is waited for, not read past.
      const intake = await intakes.findCommitted(intakeId);
      if (!intake) throw ApplicationFailure.retryable(`intake ${intakeId} is not visible yet`, 'NotVisibleYet');
      return { status: intake.status, expiresAt: intake.expires_at?.toISOString() ?? null };
    },

    /** An open intake past its expiry becomes `expired` and `request.expired` is recorded, once. */
    async expireIntake(intakeId: string): Promise<void> {
      await db.transaction(async (tx) => {
        const queries = createIntakeQueries(tx);
        const intake = await queries.findById(intakeId, true);
        if (intake?.status !== 'open' || !intake.expires_at || intake.expires_at.getTime() > Date.now()) {
          return;
        }
        const expired = await queries.end(intakeId, 'expired', null);
        if (!expired) return;
        await createEventQueries(tx).record(
          { workspaceId: expired.workspace_id, environment: expired.environment },
          'request.expired',
          { request: requestView(expired) },
        );
      });
    },
  };

  return {
    ...legacy,
    ...lifecycleActivities('intakes', {
      // An expired intake reopens when its expiry is lifted: only its expiry says whether it is due.
      loadExpiry: async (intakeId: string) => {
        const { status, expiresAt } = await legacy.loadIntakeExpiry(intakeId);
        return { state: status === 'deleted' ? ('deleted' as const) : ('live' as const), expiresAt };
      },
      expire: async (intakeId: string) => {
        await legacy.expireIntake(intakeId);
        // Its documents keep their own retention; moving the expiry reopens the intake.
        return { final: false, fileOwnerIds: [] };
      },
      plan: async (documentId: string) => {
        const plan = await legacy.loadDocumentPlan(documentId);
        return {
          ended: plan.status === 'deleted',
          fileIds: plan.fileIds,
          uploadedFileIds: plan.uploadedFileIds,
          uploadDeadline: plan.uploadDeadline,
          uploadRecheckMs: deps.config.transfers.uploads.recheckMs,
          scanned: plan.mode === 'server',
        };
      },
      uploadedFileIds: async (documentId: string) =>
        (await intakes.files([documentId])).filter((file) => file.upload_state === 'uploaded').map((file) => file.id),
      receive: async (documentId: string) => ({
        kept: true,
        retentionUntil: await legacy.receiveDocument(documentId),
      }),
      notifyReceived: legacy.notifyDocumentReceived,
      beginScan: legacy.beginDocumentScan,
      scanFile: legacy.scanIntakeFile,
      settleScan: legacy.settleDocumentScan,
      rejectUnverified: legacy.rejectUnverifiedDocument,
      destroy: legacy.destroyDocument,
      purge: legacy.purgeDocumentBlobs,
    }),
  };
}
