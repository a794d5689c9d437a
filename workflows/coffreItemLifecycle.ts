import { defineSignal, proxyActivities } from '@temporalio/workflow';
import type { createCoffreActivities } from '../activities/coffres.ts';
import { followStoredFiles, storedFilesDeletedSignal, storedFileUploadedSignal } from './fileLifecycle.ts';
import { FIRST_LOOK_RETRY, SCAN_RETRY, STORAGE_RETRY } from './retry-policies.ts';

// Deprecated: vault items are `fileLifecycle` now. This type stays registered so that the
// `coffre-item-<uuid>` workflows started before it still replay and complete: it runs the same
// steps through the activities and signals those histories name. An item's workflow lives until
// the item is deleted: remove this type (and the legacy activities of activities/coffres.ts) once
// none runs (`temporal workflow list --query "WorkflowType='coffreItemLifecycle' AND
// ExecutionStatus='Running'"` is empty), or after moving the running ones over.

type Activities = ReturnType<typeof createCoffreActivities>;

const storage = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: STORAGE_RETRY });
const scanning = proxyActivities<Activities>({
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '20 seconds',
  retry: SCAN_RETRY,
});
const firstLook = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: FIRST_LOOK_RETRY });

/** The names API processes of before `fileLifecycle` signal: `storedFileUploadedSignal`, `storedFilesDeletedSignal` now. */
export const coffreItemUploadedSignal = defineSignal('coffreItemUploaded');
export const coffreItemDeletedSignal = defineSignal('coffreItemDeleted');

/** `fileLifecycle` for the vault item (its own single file), as histories written before it replay it. */
export async function coffreItemLifecycle(input: { itemId: string }): Promise<string> {
  const { itemId } = input;
  return followStoredFiles({
    plan: async () => {
      const plan = await firstLook.loadItemPlan(itemId);
      return {
        ended: plan.status === 'deleted' || plan.status === 'rejected',
        fileIds: [itemId],
        uploadedFileIds: plan.uploaded ? [itemId] : [],
        uploadDeadline: plan.uploadDeadline,
        scanned: true,
      };
    },
    receive: async () => ({ kept: await storage.receiveItem(itemId), retentionUntil: null }),
    // No one is mailed, and receiving made the item `scanning`: no activity, as in those histories.
    notifyReceived: async () => {},
    beginScan: async () => {},
    scanFile: () => scanning.scanCoffreItem(itemId),
    settleScan: () => storage.settleItemScan(itemId),
    rejectUnverified: () => storage.rejectUnverifiedItem(itemId),
    destroy: () => storage.destroyItem(itemId),
    purge: () => storage.purgeItemBlob(itemId),
    uploadedSignals: [storedFileUploadedSignal, coffreItemUploadedSignal],
    deletedSignals: [storedFilesDeletedSignal, coffreItemDeletedSignal],
    // These histories scanned the item even when a deletion came during its receipt.
    scansStopOnDeletion: false,
  });
}
