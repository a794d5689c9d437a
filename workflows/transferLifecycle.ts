import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  defineSignal,
  patched,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { createTransferActivities } from '../activities/transfers.ts';
import type { ApprovalDecision } from '../lib/vocabulary.ts';
import { FIRST_LOOK_RETRY, MAIL_RETRY, SCAN_RETRY, STORAGE_RETRY } from './retry-policies.ts';
import { bestEffort, msUntil, RECHECK_UPLOADS } from './waiting.ts';

type Activities = ReturnType<typeof createTransferActivities>;

// Database and object-store steps: short, retried until they succeed.
const storage = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: STORAGE_RETRY });
// Scanning streams a whole file through decryption and clamd: long, so it heartbeats.
const scanning = proxyActivities<Activities>({
  startToCloseTimeout: '6 hours',
  // A dead worker is noticed when heartbeats stop: keep it short so the scan restarts soon.
  heartbeatTimeout: '20 seconds',
  retry: SCAN_RETRY,
});
// Mail is best effort: a few tries, then the transfer goes on without it.
const mail = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: MAIL_RETRY });

// The first read may race the commit that created the transfer; a transfer that
// never appears (its transaction rolled back) ends the workflow after a minute or so.
const firstLook = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: FIRST_LOOK_RETRY });

export const fileUploadedSignal = defineSignal<[string]>('fileUploaded');
/** The patch id (Temporal's `patched`) of scanning files as their uploads complete. */
const SCAN_AS_FILES_LAND = 'scan-files-as-they-land';
export const revokedSignal = defineSignal('revoked');
export const approvalDecidedSignal = defineSignal<[ApprovalDecision]>('approvalDecided');
export const expiryExtendedSignal = defineSignal<[string]>('expiryExtended');

/** `transferLifecycle`: one per transfer. */
export const transferWorkflowId = (transferId: string) => `transfer-${transferId}`;

/**
 * Owns one transfer's life (workflow id `transfer-<id>`): waits for its
 * uploads until the deadline, scans them, activates the transfer, runs the
 * approval circuit and the recipient mail, and ends it at expiry or revocation. A file whose scan
 * fails for good (its content no longer matches its upload) ends it as `scan_failed`.
 */
export async function transferLifecycle(input: { transferId: string }): Promise<string> {
  const { transferId } = input;
  const plan = await firstLook.loadTransferPlan(transferId);
  const uploaded = new Set(plan.uploadedFileIds);
  let revoked = false;
  // Approval decisions live in the database, taken whenever the API is asked;
  // a signal only says "look again", so one that comes early, or never, loses nothing.
  let decisionsSignalled = 0;
  let expiresAt = Date.parse(plan.expiresAt);
  let phase: Phase = 'preparing';
  setHandler(fileUploadedSignal, (fileId) => {
    uploaded.add(fileId);
  });
  setHandler(revokedSignal, () => {
    revoked = true;
  });
  setHandler(approvalDecidedSignal, () => {
    decisionsSignalled++;
  });
  setHandler(expiryExtendedSignal, (iso) => {
    expiresAt = Math.max(expiresAt, Date.parse(iso));
  });

  const allUploaded = () => plan.fileIds.every((id) => uploaded.has(id));

  // The approval circuit runs beside the transfer's life, from creation to end.
  const approval = plan.approvalRequired ? followApproval() : undefined;
  try {
    return await live();
  } finally {
    phase = 'ended';
    await approval;
  }

  async function live(): Promise<string> {
    // Histories written before files were scanned as they land replay the old order.
    const scans = patched(SCAN_AS_FILES_LAND) ? scansAsFilesLand() : undefined;
    const inTime = scans
      ? await scans.awaitUploads()
      : await condition(() => allUploaded() || revoked, msUntil(Date.parse(plan.uploadDeadline)));
    if (revoked) return end('revoked');
    if (!inTime) {
      await storage.endTransfer(transferId, 'deleted', 'upload_incomplete');
      return 'upload_incomplete';
    }

    await storage.beginScan(transferId);
    try {
      if (scans) await scans.finish();
      else for (const fileId of plan.fileIds) await scanOne(fileId);
    } catch (error) {
      if (!(error instanceof FileScanFailed)) throw error;
      // Scans retry until they succeed: one that failed all the same never will. The transfer
      // cannot be shown clean, so it ends, rather than staying `scanning` with its content kept.
      const cause = error.failure.cause;
      await storage.failScan(
        transferId,
        error.fileId,
        cause instanceof ApplicationFailure ? (cause.type ?? null) : null,
      );
      await bestEffort(() => mail.notifyScanFailed(transferId, error.fileId));
      return 'scan_failed';
    }
    const outcome = await storage.settleScan(transferId);
    if (outcome === 'infected') return 'infected';
    if (revoked) return end('revoked');
    if (outcome === 'active') phase = 'active';

    if (plan.recipient && !plan.approvalRequired) await bestEffort(() => mail.notifyRecipient(transferId));

    // Sleep until expiry; an extension moves the deadline, so look again when the timer fires.
    while (!revoked && Date.now() < expiresAt) {
      await condition(() => revoked, msUntil(expiresAt));
    }
    return revoked ? end('revoked') : end('expired');
  }

  /**
   * Scans each file as soon as its upload is complete, while the others still upload, with at most
   * `scansInParallel` at once (clamd scans a stream on one thread; more at once use more cores).
   */
  function scansAsFilesLand() {
    // A plan read before the setting existed has none: one at a time, as then.
    const limit = Math.max(1, plan.scansInParallel ?? 1);
    const started = new Map<string, Promise<unknown>>();
    let running = 0;
    const waiting = () => plan.fileIds.filter((id) => uploaded.has(id) && !started.has(id));
    const canStart = () => running < limit && waiting().length > 0;
    const startWhatCan = () => {
      for (const fileId of waiting()) {
        if (running >= limit) return;
        running++;
        const scan = scanOne(fileId).finally(() => {
          running--;
        });
        // Handled here so a scan failing for good before finish() awaits it is not an unhandled
        // rejection (a failed workflow task); finish() still sees the failure.
        scan.catch(() => undefined);
        started.set(fileId, scan);
      }
    };
    return {
      /**
       * Waits for every upload (false if the deadline passes first), scanning what lands meanwhile.
       * A file stored whole while Temporal was unreachable has no signal: the stored uploads are
       * re-read every `uploadRecheckMs` and at the deadline, so such a file is never taken for
       * one that did not come (test/faults/temporal-restart-transfer.test.ts).
       */
      async awaitUploads(): Promise<boolean> {
        const deadline = Date.parse(plan.uploadDeadline);
        // Histories written before the re-reads, and plans read before the setting, wait as then.
        const recheckMs: number | undefined = patched(RECHECK_UPLOADS) ? plan.uploadRecheckMs : undefined;
        for (;;) {
          // Once all are in, the rest start after beginScan: the transfer says `scanning` first.
          if (allUploaded() || revoked) return true;
          startWhatCan();
          const wait = recheckMs === undefined ? msUntil(deadline) : Math.min(recheckMs, msUntil(deadline));
          const woken = await condition(() => allUploaded() || revoked || canStart(), wait);
          if (woken) continue;
          if (recheckMs === undefined) return false;
          for (const fileId of await storage.uploadedFileIds(transferId)) uploaded.add(fileId);
          if (!allUploaded() && Date.now() >= deadline) return false;
        }
      },
      /** Scans the files not started yet and waits for every scan. */
      async finish(): Promise<void> {
        for (;;) {
          startWhatCan();
          if (started.size === plan.fileIds.length) break;
          await condition(canStart);
        }
        await Promise.all(started.values());
      },
    };
  }

  /** Scans one file; a scan that failed for good names its file. */
  function scanOne(fileId: string) {
    return scanning.scanFile(fileId).catch((error: unknown) => {
      throw error instanceof ActivityFailure ? new FileScanFailed(fileId, error) : error;
    });
  }

  async function end(how: 'revoked' | 'expired'): Promise<string> {
    await storage.endTransfer(transferId, how === 'expired' ? 'expired' : 'deleted', how);
    return how;
  }

  /**
   * Tells the owner each decision as it is taken, asks for one when the
   * transfer becomes active undecided, and mails the recipient the link once
   * it is both active and approved. Reads the persisted decision at the start,
   * on activation, on each signal, and every `approvalRecheckMs` while pending.
   */
  async function followApproval(): Promise<void> {
    let status = plan.approvalStatus;
    let seenPhase: Phase = phase;
    let seenSignals = decisionsSignalled;
    let told: string | null = null;
    let asked = false;
    let linked = false;
    for (;;) {
      if ((status === 'approved' || status === 'rejected') && status !== told) {
        told = status;
        await bestEffort(() => mail.notifyApprovalDecision(transferId));
      }
      if (seenPhase === 'active') {
        if (status === 'pending' && !asked) await bestEffort(() => mail.requestApproval(transferId));
        asked = true;
        if (status === 'approved' && plan.recipient && !linked) {
          linked = true;
          await bestEffort(() => mail.notifyRecipient(transferId));
        }
      }
      if (seenPhase === 'ended') return;
      const woken = () => decisionsSignalled !== seenSignals || phase !== seenPhase;
      if (status === 'pending' && seenPhase === 'active') await condition(woken, plan.approvalRecheckMs);
      else await condition(woken);
      seenSignals = decisionsSignalled;
      seenPhase = phase;
      if (seenPhase === 'ended') return;
      status = await storage.approvalState(transferId);
    }
  }
}

type Phase = 'preparing' | 'active' | 'ended';

/** A file's scan that failed after its retries (a non-retryable failure): which file, and why. */
class FileScanFailed extends Error {
  readonly fileId: string;
  readonly failure: ActivityFailure;
  constructor(fileId: string, failure: ActivityFailure) {
    super(`the scan of file ${fileId} failed for good: ${failure.message}`);
    this.fileId = fileId;
    this.failure = failure;
  }
}
