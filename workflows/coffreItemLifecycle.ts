import { ActivityFailure, condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createCoffreActivities } from '../activities/coffres.ts';
import { FIRST_LOOK_RETRY, SCAN_RETRY, STORAGE_RETRY } from './retry-policies.ts';
import { msUntil } from './waiting.ts';

type Activities = ReturnType<typeof createCoffreActivities>;

const storage = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: STORAGE_RETRY });
// A scan streams a whole file through decryption and clamd: long, so it heartbeats.
const scanning = proxyActivities<Activities>({
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '20 seconds',
  retry: SCAN_RETRY,
});
// The first read may race the commit that created the item.
const firstLook = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: FIRST_LOOK_RETRY });

export const coffreItemUploadedSignal = defineSignal('coffreItemUploaded');
export const coffreItemDeletedSignal = defineSignal('coffreItemDeleted');

/**
 * Owns one vault item (workflow id `coffre-item-<uuid>`, docs/coffres.md): waits for its upload
 * until the deadline, records it (`coffre.item_uploaded`), scans it (infected content, or content
 * whose scan fails for good, is shredded: `rejected`), then waits for its deletion, by its owner or with its vault, to remove the blob.
 */
export async function coffreItemLifecycle(input: { itemId: string }): Promise<string> {
  const { itemId } = input;
  const plan = await firstLook.loadItemPlan(itemId);
  let uploaded = plan.uploaded;
  let deleted = plan.status === 'deleted' || plan.status === 'rejected';
  setHandler(coffreItemUploadedSignal, () => {
    uploaded = true;
  });
  setHandler(coffreItemDeletedSignal, () => {
    deleted = true;
  });

  const inTime = await condition(() => uploaded || deleted, msUntil(Date.parse(plan.uploadDeadline)));
  if (deleted) return purge('deleted');
  if (!inTime) {
    await storage.destroyItem(itemId);
    return purge('upload_incomplete');
  }
  if (!(await storage.receiveItem(itemId))) return purge('deleted');
  try {
    await scanning.scanCoffreItem(itemId);
  } catch (error) {
    // Scans retry until they succeed: one that failed all the same never will.
    if (!(error instanceof ActivityFailure)) throw error;
    await storage.rejectUnverifiedItem(itemId);
    return purge('scan_failed');
  }
  // Rejected (infected), or deleted because its uploader lost the right to upload meanwhile.
  const settled = await storage.settleItemScan(itemId);
  if (settled !== 'available') return purge(settled);

  await condition(() => deleted);
  return purge('deleted');

  async function purge(how: string): Promise<string> {
    await storage.purgeItemBlob(itemId);
    return how;
  }
}
