import { defineSignal, makeContinueAsNewFunc, proxyActivities } from '@temporalio/workflow';
import type { createIntakeActivities } from '../activities/intakes.ts';
import { intakeDocumentWorkflowId } from './ids.ts';
import { expiryChangedSignal, followExpiry, ownerDeletedSignal, type ownerExpiry } from './ownerExpiry.ts';
import { BOOKKEEPING, FIRST_LOOK_RETRY } from './retry-policies.ts';

// Deprecated: intakes' expiry is `ownerExpiry` now. This type stays registered so that the
// `intake-<id>` workflows started before it still replay and complete: it runs the same loop
// through the activities and signals those histories name. It hands over to `ownerExpiry` when its
// history grows long; remove it (and the legacy activities of activities/intakes.ts) once no
// workflow of this type runs (`temporal workflow list --query "WorkflowType='intakeLifecycle' AND
// ExecutionStatus='Running'"` is empty).

type Activities = ReturnType<typeof createIntakeActivities>;

const bookkeeping = proxyActivities<Activities>(BOOKKEEPING);
const firstLook = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: FIRST_LOOK_RETRY });

/** The names API processes of before `ownerExpiry` signal: `expiryChangedSignal`, `ownerDeletedSignal` now. */
export const intakeExpiryChangedSignal = defineSignal('intakeExpiryChanged');
export const intakeDeletedSignal = defineSignal('intakeDeleted');

/** `ownerExpiry` for the intake, as histories written before it replay it. */
export async function intakeLifecycle(input: { intakeId: string }): Promise<string> {
  const { intakeId } = input;
  return followExpiry({
    loadExpiry: async () => {
      // An expired intake reopens when its expiry is lifted: only its expiry said whether it was due.
      const { status, expiresAt } = await firstLook.loadIntakeExpiry(intakeId);
      return { state: status === 'deleted' ? 'deleted' : 'live', expiresAt };
    },
    expire: async () => {
      await bookkeeping.expireIntake(intakeId);
      return { final: false, fileOwnerIds: [] };
    },
    // An intake's expiry ends none of its documents: they keep their own retention.
    purgeFiles: async () => {},
    fileWorkflowId: intakeDocumentWorkflowId,
    changedSignals: [expiryChangedSignal, intakeExpiryChangedSignal],
    deletedSignals: [ownerDeletedSignal, intakeDeletedSignal],
    startAfresh: () =>
      makeContinueAsNewFunc<typeof ownerExpiry>({ workflowType: 'ownerExpiry' })({
        family: 'intakes',
        ownerId: intakeId,
      }),
  });
}
