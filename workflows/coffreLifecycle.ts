import { condition, defineSignal, getExternalWorkflowHandle, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createCoffreActivities } from '../activities/coffres.ts';
import { coffreItemDeletedSignal } from './coffreItemLifecycle.ts';
import { coffreItemWorkflowId } from './ids.ts';
import { BOOKKEEPING, FIRST_LOOK_RETRY, STORAGE_RETRY } from './retry-policies.ts';
import { msUntil } from './waiting.ts';

type Activities = ReturnType<typeof createCoffreActivities>;

const bookkeeping = proxyActivities<Activities>(BOOKKEEPING);
const storage = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: STORAGE_RETRY });
const firstLook = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: FIRST_LOOK_RETRY });

/** The vault's expiry changed (set, moved or removed): read it again. */
export const coffreExpiryChangedSignal = defineSignal('coffreExpiryChanged');
export const coffreDeletedSignal = defineSignal('coffreDeleted');

/**
 * Owns a vault's expiry (workflow id `coffre-<id>`): sleeps until `expires_at`, then ends the
 * vault: members lose access, every item's key is destroyed at once, then each blob is removed.
 * The owner may move or remove the expiry until then; each change is a signal to read it again.
 */
export async function coffreLifecycle(input: { coffreId: string }): Promise<string> {
  const { coffreId } = input;
  let changes = 0;
  let deleted = false;
  setHandler(coffreExpiryChangedSignal, () => {
    changes++;
  });
  setHandler(coffreDeletedSignal, () => {
    deleted = true;
  });
  for (;;) {
    const seen = changes;
    const changed = () => deleted || changes !== seen;
    const { status, expiresAt } = await firstLook.loadCoffreExpiry(coffreId);
    if (deleted || status === 'deleted') return 'deleted';
    const at = expiresAt === null ? null : Date.parse(expiresAt);
    if (status === 'expired' || (at !== null && Date.now() >= at)) {
      const items = await bookkeeping.expireCoffre(coffreId);
      for (const itemId of items) {
        await storage.purgeItemBlob(itemId);
        // Its own workflow waits for a deletion to end; one that has ended already is fine.
        await getExternalWorkflowHandle(coffreItemWorkflowId(itemId))
          .signal(coffreItemDeletedSignal)
          .catch(() => undefined);
      }
      return 'expired';
    }
    if (at === null) await condition(changed);
    else await condition(changed, msUntil(at));
  }
}
