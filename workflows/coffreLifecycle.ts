import { defineSignal, makeContinueAsNewFunc, proxyActivities } from '@temporalio/workflow';
import type { createCoffreActivities } from '../activities/coffres.ts';
import { coffreItemWorkflowId } from './ids.ts';
import { expiryChangedSignal, followExpiry, ownerDeletedSignal, type ownerExpiry } from './ownerExpiry.ts';
import { BOOKKEEPING, FIRST_LOOK_RETRY, STORAGE_RETRY } from './retry-policies.ts';

// Deprecated: vaults' expiry is `ownerExpiry` now. This type stays registered so that the
// `coffre-<id>` workflows started before it still replay and complete: it runs the same loop
// through the activities and signals those histories name. Remove it (and the legacy activities
// of activities/coffres.ts) once no workflow of this type runs (`temporal workflow list --query
// "WorkflowType='coffreLifecycle' AND ExecutionStatus='Running'"` is empty).

type Activities = ReturnType<typeof createCoffreActivities>;

const bookkeeping = proxyActivities<Activities>(BOOKKEEPING);
const storage = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: STORAGE_RETRY });
const firstLook = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: FIRST_LOOK_RETRY });

/** The names API processes of before `ownerExpiry` signal: `expiryChangedSignal`, `ownerDeletedSignal` now. */
export const coffreExpiryChangedSignal = defineSignal('coffreExpiryChanged');
export const coffreDeletedSignal = defineSignal('coffreDeleted');

/** `ownerExpiry` for the vault, as histories written before it replay it. */
export async function coffreLifecycle(input: { coffreId: string }): Promise<string> {
  const { coffreId } = input;
  return followExpiry({
    loadExpiry: async () => {
      const { status, expiresAt } = await firstLook.loadCoffreExpiry(coffreId);
      return { state: status === 'deleted' || status === 'expired' ? status : 'live', expiresAt };
    },
    expire: async () => ({ final: true, fileOwnerIds: await bookkeeping.expireCoffre(coffreId) }),
    purgeFiles: (itemId) => storage.purgeItemBlob(itemId),
    fileWorkflowId: coffreItemWorkflowId,
    changedSignals: [expiryChangedSignal, coffreExpiryChangedSignal],
    deletedSignals: [ownerDeletedSignal, coffreDeletedSignal],
    // These histories read the vault again after a deletion before ending.
    endsOnDeletionUnread: false,
    startAfresh: () =>
      makeContinueAsNewFunc<typeof ownerExpiry>({ workflowType: 'ownerExpiry' })({
        family: 'coffres',
        ownerId: coffreId,
      }),
  });
}
