import {
  ActivityFailure,
  condition,
  defineSignal,
  patched,
  type SignalDefinition,
  setHandler,
} from '@temporalio/workflow';
import type { FileActivities, FilePlan, FileReceipt } from '../activities/lifecycles.ts';
import { familyActivities } from './family-activities.ts';
import type { LifecycleFamily } from './ids.ts';
import { FIRST_LOOK_RETRY, MAIL_RETRY, SCAN_RETRY, STORAGE_RETRY } from './retry-policies.ts';
import { bestEffort, msUntil, RECHECK_UPLOADS } from './waiting.ts';

/** One file of the owner is stored (its id). */
export const storedFileUploadedSignal = defineSignal<[string]>('storedFileUploaded');
/** The owner was deleted (its keys are gone already): the blobs go, the workflow ends. */
export const storedFilesDeletedSignal = defineSignal('storedFilesDeleted');

export type FileLifecycleInput = { family: LifecycleFamily; ownerId: string };

/**
 * Owns the stored files of one file owner of the family (workflow id `storedFilesWorkflowId`: an
 * intake document, a vault item): waits for every file until the upload deadline, has the family
 * receive them (its event, retention starts) and tell whom it tells, scans server-mode content file
 * by file (infected, or failing for good, the owner is `rejected`), and at the end of retention,
 * or when the owner is deleted, has its keys destroyed and its blobs removed.
 */
export async function fileLifecycle(input: FileLifecycleInput): Promise<string> {
  const { family, ownerId } = input;
  // The first read may race the commit that created the owner.
  const firstLook = familyActivities<FileActivities>(family, {
    startToCloseTimeout: '30 seconds',
    retry: FIRST_LOOK_RETRY,
  });
  const storage = familyActivities<FileActivities>(family, { startToCloseTimeout: '1 minute', retry: STORAGE_RETRY });
  // A scan streams a whole file through decryption and clamd: long, so it heartbeats.
  const scanning = familyActivities<FileActivities>(family, {
    startToCloseTimeout: '6 hours',
    heartbeatTimeout: '20 seconds',
    retry: SCAN_RETRY,
  });
  const mail = familyActivities<FileActivities>(family, { startToCloseTimeout: '1 minute', retry: MAIL_RETRY });
  return followStoredFiles({
    plan: () => firstLook.plan(ownerId),
    uploadedFileIds: () => storage.uploadedFileIds(ownerId),
    receive: () => storage.receive(ownerId),
    notifyReceived: () => mail.notifyReceived(ownerId),
    beginScan: () => storage.beginScan(ownerId),
    scanFile: (fileId) => scanning.scanFile(fileId),
    settleScan: () => storage.settleScan(ownerId),
    rejectUnverified: () => storage.rejectUnverified(ownerId),
    destroy: () => storage.destroy(ownerId),
    purge: () => storage.purge(ownerId),
    uploadedSignals: [storedFileUploadedSignal],
    deletedSignals: [storedFilesDeletedSignal],
  });
}

/** What `followStoredFiles` does through the family, and the signals it listens to. */
export type StoredFilesSteps = {
  plan(): Promise<FilePlan>;
  /** Absent in the wrappers replaying the workflow types `fileLifecycle` replaced: they never re-read. */
  uploadedFileIds?(): Promise<string[]>;
  receive(): Promise<FileReceipt>;
  notifyReceived(): Promise<void>;
  beginScan(): Promise<void>;
  scanFile(fileId: string): Promise<unknown>;
  settleScan(): Promise<string>;
  rejectUnverified(): Promise<void>;
  destroy(): Promise<void>;
  purge(): Promise<void>;
  /** Their argument is the file's id; a signal without one stands for the owner's only file. */
  uploadedSignals: (SignalDefinition<[string]> | SignalDefinition<[]>)[];
  deletedSignals: SignalDefinition[];
  /**
   * Whether a deletion signalled during the scans stops them. Only the wrapper replaying histories
   * of `coffreItemLifecycle`, which scanned its one file regardless, passes false.
   */
  scansStopOnDeletion?: boolean;
};

/** The life of `fileLifecycle`, shared with the wrappers of the workflow types it replaced. */
export async function followStoredFiles(steps: StoredFilesSteps): Promise<string> {
  const plan = await steps.plan();
  const uploaded = new Set(plan.uploadedFileIds);
  let deleted = plan.ended;
  for (const signal of steps.uploadedSignals) {
    setHandler(signal as SignalDefinition<[string?]>, (fileId?: string) => {
      const only = plan.fileIds.length === 1 ? plan.fileIds[0] : undefined;
      const id = fileId ?? only;
      if (id !== undefined) uploaded.add(id);
    });
  }
  for (const signal of steps.deletedSignals) {
    setHandler(signal, () => {
      deleted = true;
    });
  }

  const allUploaded = () => plan.fileIds.every((id) => uploaded.has(id));
  const inTime = await awaitUploads();
  if (deleted) return purge('deleted');
  if (!inTime) {
    await steps.destroy();
    return purge('upload_incomplete');
  }

  const receipt = await steps.receive();
  if (!receipt.kept) return purge('deleted');
  await bestEffort(() => steps.notifyReceived());
  if (plan.scanned) {
    await steps.beginScan();
    for (const fileId of plan.fileIds) {
      if (deleted && steps.scansStopOnDeletion !== false) return purge('deleted');
      try {
        await steps.scanFile(fileId);
      } catch (error) {
        // Scans retry until they succeed: one that failed all the same never will.
        if (!(error instanceof ActivityFailure)) throw error;
        await steps.rejectUnverified();
        return purge('scan_failed');
      }
    }
    // Rejected (infected), or deleted meanwhile (by its owner, or as its uploader lost the right to upload).
    const settled = await steps.settleScan();
    if (settled !== 'available') return purge(settled);
  }

  if (receipt.retentionUntil === null) {
    await condition(() => deleted);
    return purge('deleted');
  }
  await condition(() => deleted, msUntil(Date.parse(receipt.retentionUntil)));
  if (!deleted) await steps.destroy();
  return purge(deleted ? 'deleted' : 'retention_ended');

  /**
   * Waits for every upload, or the owner's deletion; false if the deadline passes first. A file
   * stored whole while Temporal was unreachable has no signal: the stored uploads are re-read every
   * `uploadRecheckMs` and at the deadline, so such a file is never taken for one that did not come.
   */
  async function awaitUploads(): Promise<boolean> {
    const deadline = Date.parse(plan.uploadDeadline);
    const reread = steps.uploadedFileIds;
    // Histories written before the re-reads, and the replaced workflow types, wait as then.
    const recheckMs = reread && patched(RECHECK_UPLOADS) ? plan.uploadRecheckMs : undefined;
    for (;;) {
      const wait = recheckMs === undefined ? msUntil(deadline) : Math.min(recheckMs, msUntil(deadline));
      if (await condition(() => allUploaded() || deleted, wait)) return true;
      if (!reread || recheckMs === undefined) return false;
      for (const fileId of await reread()) uploaded.add(fileId);
      if (allUploaded()) return true;
      if (Date.now() >= deadline) return false;
    }
  }

  async function purge(how: string): Promise<string> {
    await steps.purge();
    return how;
  }
}
