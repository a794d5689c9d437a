import { ActivityFailure, condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createIntakeActivities } from '../activities/intakes.ts';
import { FIRST_LOOK_RETRY, MAIL_RETRY, SCAN_RETRY, STORAGE_RETRY } from './retry-policies.ts';
import { bestEffort, msUntil } from './waiting.ts';

type Activities = ReturnType<typeof createIntakeActivities>;

const storage = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: STORAGE_RETRY });
// A scan streams a whole file through decryption and clamd: long, so it heartbeats.
const scanning = proxyActivities<Activities>({
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '20 seconds',
  retry: SCAN_RETRY,
});
const mail = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: MAIL_RETRY });
// The first read may race the commit that created the document.
const firstLook = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: FIRST_LOOK_RETRY });

export const documentFileUploadedSignal = defineSignal<[string]>('documentFileUploaded');
export const documentDeletedSignal = defineSignal('documentDeleted');

/**
 * Owns one intake document (workflow id `intake-document-<id>`, docs/intakes.md): waits for its
 * files until the upload deadline, marks it `received` (retention starts), tells whom the intake
 * names, scans server-mode files (infected, or failing for good, it is `rejected`), and at the end
 * of retention, or when its owner deletes it, destroys its keys and removes its blobs.
 */
export async function intakeDocumentLifecycle(input: { documentId: string }): Promise<string> {
  const { documentId } = input;
  const plan = await firstLook.loadDocumentPlan(documentId);
  const uploaded = new Set(plan.uploadedFileIds);
  let deleted = plan.status === 'deleted';
  setHandler(documentFileUploadedSignal, (fileId) => {
    uploaded.add(fileId);
  });
  setHandler(documentDeletedSignal, () => {
    deleted = true;
  });

  const allUploaded = () => plan.fileIds.every((id) => uploaded.has(id));
  const inTime = await condition(() => allUploaded() || deleted, msUntil(Date.parse(plan.uploadDeadline)));
  if (deleted) return purge('deleted');
  if (!inTime) {
    await storage.destroyDocument(documentId);
    return purge('upload_incomplete');
  }

  const retentionUntil = await storage.receiveDocument(documentId);
  await bestEffort(() => mail.notifyDocumentReceived(documentId));
  if (plan.mode === 'server') {
    await storage.beginDocumentScan(documentId);
    for (const fileId of plan.fileIds) {
      if (deleted) return purge('deleted');
      try {
        await scanning.scanIntakeFile(fileId);
      } catch (error) {
        // Scans retry until they succeed: one that failed all the same never will.
        if (!(error instanceof ActivityFailure)) throw error;
        await storage.rejectUnverifiedDocument(documentId);
        return purge('scan_failed');
      }
    }
    if ((await storage.settleDocumentScan(documentId)) === 'rejected') return purge('rejected');
  }

  await condition(() => deleted, msUntil(Date.parse(retentionUntil)));
  if (!deleted) await storage.destroyDocument(documentId);
  return purge(deleted ? 'deleted' : 'retention_ended');

  async function purge(how: string): Promise<string> {
    await storage.purgeDocumentBlobs(documentId);
    return how;
  }
}
