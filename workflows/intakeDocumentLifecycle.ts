import { defineSignal, proxyActivities } from '@temporalio/workflow';
import type { createIntakeActivities } from '../activities/intakes.ts';
import { followStoredFiles, storedFilesDeletedSignal, storedFileUploadedSignal } from './fileLifecycle.ts';
import { FIRST_LOOK_RETRY, MAIL_RETRY, SCAN_RETRY, STORAGE_RETRY } from './retry-policies.ts';

// Deprecated: intake documents are `fileLifecycle` now. This type stays registered so that the
// `intake-document-<id>` workflows started before it still replay and complete: it runs the same
// steps through the activities and signals those histories name. Remove it (and the legacy
// activities of activities/intakes.ts) once no workflow of this type runs (`temporal workflow list
// --query "WorkflowType='intakeDocumentLifecycle' AND ExecutionStatus='Running'"` is empty; a
// document lives until its retention ends, INTAKE retention_hours at most).

type Activities = ReturnType<typeof createIntakeActivities>;

const storage = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: STORAGE_RETRY });
const scanning = proxyActivities<Activities>({
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '20 seconds',
  retry: SCAN_RETRY,
});
const mail = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: MAIL_RETRY });
const firstLook = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: FIRST_LOOK_RETRY });

/** The names API processes of before `fileLifecycle` signal: `storedFileUploadedSignal`, `storedFilesDeletedSignal` now. */
export const documentFileUploadedSignal = defineSignal<[string]>('documentFileUploaded');
export const documentDeletedSignal = defineSignal('documentDeleted');

/** `fileLifecycle` for the document, as histories written before it replay it. */
export async function intakeDocumentLifecycle(input: { documentId: string }): Promise<string> {
  const { documentId } = input;
  return followStoredFiles({
    plan: async () => {
      const plan = await firstLook.loadDocumentPlan(documentId);
      return {
        ended: plan.status === 'deleted',
        fileIds: plan.fileIds,
        uploadedFileIds: plan.uploadedFileIds,
        uploadDeadline: plan.uploadDeadline,
        scanned: plan.mode === 'server',
      };
    },
    receive: async () => ({ kept: true, retentionUntil: await storage.receiveDocument(documentId) }),
    notifyReceived: () => mail.notifyDocumentReceived(documentId),
    beginScan: () => storage.beginDocumentScan(documentId),
    scanFile: (fileId) => scanning.scanIntakeFile(fileId),
    // These histories ended only a rejected document here; one deleted meanwhile waited for its signal.
    settleScan: async () => ((await storage.settleDocumentScan(documentId)) === 'rejected' ? 'rejected' : 'available'),
    rejectUnverified: () => storage.rejectUnverifiedDocument(documentId),
    destroy: () => storage.destroyDocument(documentId),
    purge: () => storage.purgeDocumentBlobs(documentId),
    uploadedSignals: [storedFileUploadedSignal, documentFileUploadedSignal],
    deletedSignals: [storedFilesDeletedSignal, documentDeletedSignal],
  });
}
