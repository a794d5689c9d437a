import { ApplicationFailure } from '@temporalio/activity';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import type { Config } from '../lib/config.ts';
import type { Keyring } from '../lib/crypto/key-wrap.ts';
import { createAuditQueries } from '../lib/db/queries/audit.ts';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { createLeftoverObjectQueries } from '../lib/db/queries/leftover-objects.ts';
import { createRecipientQueries } from '../lib/db/queries/recipients.ts';
import { createTransferQueries, type TransferRow } from '../lib/db/queries/transfers.ts';
import { createWorkspaceQueries } from '../lib/db/queries/workspaces.ts';
import type { EventData, EventType } from '../lib/events/catalog.ts';
import { transferEventView } from '../lib/events/views.ts';
import type { Semaphore } from '../lib/in-parallel.ts';
import type { Mailer } from '../lib/mail/mailer.ts';
import { approvalDecisionMail, approvalRequestMail, scanFailedMail, shareLinkMail } from '../lib/mail/templates.ts';
import type { Scanner } from '../lib/scan/clamd.ts';
import type { ObjectStore } from '../lib/storage/object-store.ts';
import { transferObjects } from '../lib/transfers/family.ts';
import { transferPhase } from '../lib/transfers/phase.ts';
import { scanWarning, shareUrl } from '../lib/transfers/present.ts';
import type { ScanStatus, TransferStatus } from '../lib/vocabulary.ts';
import { onceCommitted } from './first-look.ts';
import { failureOf, removeBlobs, scanAndRecord } from './stored-files.ts';

export type TransferActivityDeps = {
  config: Config;
  db: DatabasePool;
  objects: ObjectStore;
  keyring: Keyring;
  scanner: Scanner;
  /** Absent: scans are not queued for clamd (tests with a clamd of their own). */
  scanSlots?: Semaphore;
  mailer: Mailer;
};

type ScanOutcome = 'clean' | 'infected' | 'too_large' | 'skipped';
type ApprovalStatus = TransferRow['approval_status'];
/** Why a transfer ends, as its `transfer.expired` or `transfer.deleted` event says. */
type EndReason = EventData<'transfer.expired' | 'transfer.deleted'>['reason'];

// Every activity here is idempotent: state changes are guarded UPDATEs that
// match once, object deletions succeed on missing objects, and a rescan
// recomputes the same answer. Temporal may retry any of them at any point.
export function createTransferActivities(deps: TransferActivityDeps) {
  const { db, objects } = deps;
  // A 5xx SMTP answer (unknown mailbox, refused) will not change on retry.
  const send: Mailer['send'] = (message) =>
    deps.mailer.send(message).catch((error: Error & { responseCode?: number }) => {
      if ((error.responseCode ?? 0) >= 500) throw ApplicationFailure.nonRetryable(error.message, 'MailRejected');
      throw error;
    });
  const transfers = createTransferQueries(db);

  async function mustLoad(transferId: string): Promise<TransferRow> {
    const transfer = await transfers.findById(transferId);
    if (!transfer) throw ApplicationFailure.nonRetryable(`transfer ${transferId} does not exist`, 'NotFound');
    return transfer;
  }

  // A state change, its events and its audit entry commit together, so a retry
  // after a crash finds either all of them or none.
  async function record<T extends EventType>(
    conn: CommonQueryMethods,
    transfer: TransferRow,
    type: T,
    data: EventData<T>,
  ) {
    await createEventQueries(conn).record(
      { workspaceId: transfer.workspace_id, environment: transfer.environment },
      type,
      data,
    );
  }

  async function audit(
    conn: CommonQueryMethods,
    transfer: TransferRow,
    action: string,
    metadata: Record<string, unknown> = {},
  ) {
    await createAuditQueries(conn).insertSystem({
      workspaceId: transfer.workspace_id,
      environment: transfer.environment,
      action,
      resourceType: 'transfer',
      resourceId: transfer.id,
      metadata,
    });
  }

  async function destroyContent(transferId: string) {
    // In requests of 1,000 keys: one call per file took over the activity's minute for a transfer of
    // 10,000 files (TRANSFER_MAX_FILES may be raised), and each retry started again from the first.
    await removeBlobs(objects, await transfers.files(transferId));
    // Done: the sweeper (lib/storage/sweeper.ts) need not come back for them.
    await createLeftoverObjectQueries(db).markDeleted(transferObjects, transferId);
  }

  return {
    async loadTransferPlan(transferId: string) {
      // The workflow is started just before the transaction that creates the transfer,
      // so its first look may come before the commit: waited for, then retried.
      const transfer = await onceCommitted(() => transfers.findById(transferId));
      if (!transfer) throw ApplicationFailure.retryable(`transfer ${transferId} is not visible yet`, 'NotVisibleYet');
      const files = await transfers.files(transferId);
      return {
        fileIds: files.map((f) => f.id),
        uploadedFileIds: files.filter((f) => f.upload_state === 'uploaded').map((f) => f.id),
        uploadDeadline: transfer.upload_deadline.toISOString(),
        expiresAt: transfer.expires_at.toISOString(),
        approvalRequired: transfer.approval_required,
        approvalStatus: transfer.approval_status,
        // How often a transfer waiting for a decision looks at it again, in case a signal was lost.
        approvalRecheckMs: deps.config.transfers.approvalRecheckMs,
        // How often a transfer waiting for its uploads re-reads them, in case a signal was lost.
        uploadRecheckMs: deps.config.transfers.uploads.recheckMs,
        recipient: transfer.recipient,
        scansInParallel: deps.config.clamd.scansPerTransfer,
      };
    },

    /** The files stored whole: what the workflow re-reads while it waits, in case a signal was lost. */
    async uploadedFileIds(transferId: string): Promise<string[]> {
      const files = await transfers.files(transferId);
      return files.filter((f) => f.upload_state === 'uploaded').map((f) => f.id);
    },

    /** The persisted approval decision: the workflow's signal only says when to look. */
    async approvalState(transferId: string): Promise<ApprovalStatus> {
      return (await mustLoad(transferId)).approval_status;
    },

    async beginScan(transferId: string): Promise<void> {
      await transfers.setScanning(transferId, 'scanning');
    },

    /**
     * Streams one uploaded file through decryption, SHA-256 and clamd; records what it found. It
     * may run while the transfer's other files are still uploading: a file is scanned as soon as
     * it is complete.
     */
    async scanFile(fileId: string): Promise<ScanOutcome> {
      const file = await transfers.file(fileId);
      if (!file) throw ApplicationFailure.nonRetryable(`file ${fileId} does not exist`, 'NotFound');
      const transfer = await mustLoad(file.transfer_id);
      const phase = transferPhase(transfer);
      if (phase !== 'scanning' && phase !== 'uploading') return 'skipped';
      // The workflow asks once the API has signalled the upload, after its commit: a miss is a race.
      if (file.upload_state !== 'uploaded') {
        throw ApplicationFailure.retryable(`file ${fileId} is not uploaded yet`, 'NotUploaded');
      }
      if (transfer.encryption_mode === 'e2e') {
        // Ciphertext the server cannot read: check it is all there, and say it was not scanned.
        // Its upload is complete, so a stored object of another size will stay so.
        const stored = await objects.size(file.object_key);
        if (stored !== file.size) {
          throw ApplicationFailure.nonRetryable(
            `stored ${stored} bytes of ${file.size} for file ${file.id}`,
            'SizeMismatch',
          );
        }
        await transfers.recordFileScan(file.id, { sha256: null, scanStatus: 'not_scanned_e2e', signature: null });
        return 'skipped';
      }
      const status = await scanAndRecord(deps, file, (scan) => transfers.recordFileScan(file.id, scan));
      return status === 'not_scanned_too_large' ? 'too_large' : status;
    },

    /** Decides the transfer from its files' scans: infected content is destroyed, anything else activates. */
    async settleScan(transferId: string): Promise<'active' | 'infected' | 'ended'> {
      const transfer = await mustLoad(transferId);
      const phase = transferPhase(transfer);
      if (phase !== 'scanning') return phase === 'active' ? 'active' : 'ended';
      const files = await transfers.files(transferId);
      const statuses = new Set(files.map((f) => f.scan_status));
      if (statuses.has('infected')) {
        // An infected file always has the signature clamd named (lib/scan/clamd.ts).
        const signatures = files
          .filter((f) => f.scan_status === 'infected')
          .flatMap((f) => (f.scan_signature === null ? [] : [f.scan_signature]));
        await db.transaction(async (tx) => {
          const queries = createTransferQueries(tx);
          await queries.setScanStatus(transferId, 'infected');
          const ended = await queries.end(transferId, 'deleted', 'infected');
          if (!ended) return;
          const transfer = transferEventView(ended);
          await record(tx, ended, 'transfer.scanned', { transfer, scan_status: 'infected' });
          await record(tx, ended, 'transfer.scan_infected', { transfer, signatures });
          await audit(tx, ended, 'transfer.scan_infected', { signatures });
        });
        await destroyContent(transferId);
        return 'infected';
      }
      // Files too large for clamd do not hold the transfer back: it is activated, flagged
      // `not_scanned_too_large`, and the recipient is warned (share view and mail).
      const unscanned = files.filter((f) => f.scan_status === 'not_scanned_too_large');
      const scanStatus: ScanStatus =
        unscanned.length > 0
          ? 'not_scanned_too_large'
          : transfer.encryption_mode === 'e2e'
            ? 'not_scanned_e2e'
            : 'clean';
      await db.transaction(async (tx) => {
        const active = await createTransferQueries(tx).activate(transferId, scanStatus);
        if (!active) return;
        const transfer = transferEventView(active);
        await record(tx, active, 'transfer.scanned', { transfer, scan_status: scanStatus });
        if (scanStatus === 'clean') await record(tx, active, 'transfer.scan_clean', { transfer });
        if (unscanned.length > 0) {
          const unscannedFiles = unscanned.map((f) => ({ id: f.id, size: f.size }));
          await record(tx, active, 'transfer.scan_too_large', { transfer, files: unscannedFiles });
        }
        // A decision taken while it uploaded or scanned stands: there is nothing left to request.
        if (active.approval_status === 'pending') {
          await record(tx, active, 'transfer.approval_requested', { transfer });
        }
        await audit(tx, active, 'transfer.activated', { scan_status: scanStatus });
      });
      return 'active';
    },

    /**
     * Ends a transfer one of whose files failed its scan for good (`failureType`, the scan's
     * ApplicationFailure type): deleted as `scan_failed`, keys shredded, `transfer.scan_failed`;
     * then its objects deleted. Nothing is recorded if it had ended already (revoked meanwhile).
     */
    async failScan(transferId: string, fileId: string, failureType: string | null): Promise<void> {
      await db.transaction(async (tx) => {
        const ended = await createTransferQueries(tx).end(transferId, 'deleted', 'scan_failed');
        if (!ended) return;
        const failure = failureOf(failureType);
        await record(tx, ended, 'transfer.scan_failed', {
          transfer: transferEventView(ended),
          file_id: fileId,
          failure,
        });
        await audit(tx, ended, 'transfer.scan_failed', { file_id: fileId, failure });
      });
      await destroyContent(transferId);
    },

    /** Mails the transfer's owner that it was removed because a file could not be verified. */
    async notifyScanFailed(transferId: string, fileId: string): Promise<void> {
      const transfer = await mustLoad(transferId);
      if (transfer.status !== 'deleted' || transfer.status_reason !== 'scan_failed') return;
      const owner = await createWorkspaceQueries(db).findUser(transfer.workspace_id, transfer.user_id);
      if (!owner) return;
      const file = await transfers.file(fileId);
      await send(
        scanFailedMail({
          to: owner.email,
          transferTitle: transfer.transfer_title ?? transfer.short_code,
          fileName: file?.name ?? 'a file',
        }),
      );
    },

    /** Ends a transfer: status, crypto-shredding of its keys, the event; then deletion of its objects. */
    async endTransfer(
      transferId: string,
      status: Extract<TransferStatus, 'expired' | 'deleted'>,
      reason: EndReason,
    ): Promise<void> {
      const type = status === 'expired' ? 'transfer.expired' : 'transfer.deleted';
      await db.transaction(async (tx) => {
        const ended = await createTransferQueries(tx).end(transferId, status, reason);
        if (!ended) return;
        const transfer = transferEventView(ended);
        if (reason === 'expired') await record(tx, ended, 'transfer.expired', { transfer, reason });
        else await record(tx, ended, 'transfer.deleted', { transfer, reason });
        await audit(tx, ended, type, { reason });
      });
      await destroyContent(transferId);
    },

    /** Mails the workspace owner that a transfer waits for a decision. */
    async requestApproval(transferId: string): Promise<void> {
      const transfer = await mustLoad(transferId);
      const owner = await createWorkspaceQueries(db).findOwner(transfer.workspace_id);
      const requester = await createWorkspaceQueries(db).findUser(transfer.workspace_id, transfer.user_id);
      if (owner) {
        await send(
          approvalRequestMail({
            to: owner.email,
            transferTitle: transfer.transfer_title ?? transfer.short_code,
            requesterEmail: requester?.email ?? 'a workspace member',
            approveUrlHint: `POST /v1/transfers/${transfer.id}/approve`,
          }),
        );
      }
    },

    /** Mails the transfer's owner its current decision (nothing while it is pending). */
    async notifyApprovalDecision(transferId: string): Promise<void> {
      const transfer = await mustLoad(transferId);
      const owner = await createWorkspaceQueries(db).findUser(transfer.workspace_id, transfer.user_id);
      if (!owner || !transfer.approval_status || transfer.approval_status === 'pending') return;
      await send(
        approvalDecisionMail({
          to: owner.email,
          transferTitle: transfer.transfer_title ?? transfer.short_code,
          decision: transfer.approval_status,
          note: transfer.approval_note,
        }),
      );
    },

    /**
     * Mails each recipient their personal link, only while the transfer is active and, if it needs
     * approval, approved. A recipient is marked as mailed once their mail is sent, so a retry mails
     * only those not yet mailed (one mail each, unless the worker dies between a send and its mark).
     */
    async notifyRecipient(transferId: string): Promise<void> {
      const transfer = await mustLoad(transferId);
      if (!transfer.recipient || transfer.status !== 'active') return;
      if (transfer.approval_required && transfer.approval_status !== 'approved') return;
      const files = await transfers.files(transferId);
      const sender = await createWorkspaceQueries(db).findUser(transfer.workspace_id, transfer.user_id);
      const mail = (to: string, code: string) =>
        shareLinkMail({
          to,
          senderName: sender?.email ?? 'Valise',
          transferTitle: transfer.transfer_title ?? 'Files for you',
          shareUrl: shareUrl(deps.config, code),
          expiresAt: transfer.expires_at,
          fileCount: files.length,
          totalBytes: files.reduce((sum, f) => sum + f.size, 0),
          warning: scanWarning(transfer),
        });
      const recipients = createRecipientQueries(db);
      const links = await recipients.linksOfTransfer(transferId);
      // A transfer created before personal links existed has its one address and no link.
      if (links.length === 0) return void (await send(mail(transfer.recipient, transfer.short_code)));
      // An address the mail server refuses for good does not keep the others from their mail.
      let refused: unknown = null;
      for (const link of links) {
        if (link.mailed_at) continue;
        try {
          await send(mail(link.email, link.share_code));
        } catch (error) {
          if (!(error instanceof ApplicationFailure) || !error.nonRetryable) throw error;
          refused ??= error;
          continue;
        }
        await recipients.markMailed(link.id);
      }
      if (refused) throw refused;
    },
  };
}
