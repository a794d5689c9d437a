import {
  condition,
  continueAsNew,
  defineSignal,
  getExternalWorkflowHandle,
  type SignalDefinition,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { ExpiryOutcome, FileActivities, OwnerExpiry, OwnerExpiryActivities } from '../activities/lifecycles.ts';
import { familyActivities } from './family-activities.ts';
import { storedFilesDeletedSignal } from './fileLifecycle.ts';
import { type LifecycleFamily, storedFilesWorkflowId } from './ids.ts';
import { BOOKKEEPING, FIRST_LOOK_RETRY, STORAGE_RETRY } from './retry-policies.ts';
import { msUntil } from './waiting.ts';

/** The owner's expiry changed (set, moved or removed): read it again. */
export const expiryChangedSignal = defineSignal('expiryChanged');
/** The owner was deleted (its files' keys are gone already): the workflow ends. */
export const ownerDeletedSignal = defineSignal('ownerDeleted');

export type OwnerExpiryInput = { family: LifecycleFamily; ownerId: string };

/**
 * Owns the expiry of an owner of the family (workflow id `expiryWorkflowId(family, id)`: an intake,
 * a vault): sleeps until its expiry, then has the family end it (`<family>.expire`). The expiry may
 * move or go until then; each change is a signal to read it again. An owner whose end is final has
 * its files' blobs removed and their workflows ended; one that may reopen (an intake whose expiry
 * is lifted) is waited on. A long-lived, often edited owner starts afresh when its history grows.
 */
export async function ownerExpiry(input: OwnerExpiryInput): Promise<string> {
  const { family, ownerId } = input;
  const firstLook = familyActivities<OwnerExpiryActivities>(family, {
    startToCloseTimeout: '30 seconds',
    retry: FIRST_LOOK_RETRY,
  });
  const bookkeeping = familyActivities<OwnerExpiryActivities>(family, BOOKKEEPING);
  // A final end removes the blobs of the file owners it names, with their family's own step.
  const storage = familyActivities<Pick<FileActivities, 'purge'>>(family, {
    startToCloseTimeout: '1 minute',
    retry: STORAGE_RETRY,
  });
  return followExpiry({
    loadExpiry: () => firstLook.loadExpiry(ownerId),
    expire: () => bookkeeping.expire(ownerId),
    purgeFiles: (fileOwnerId) => storage.purge(fileOwnerId),
    fileWorkflowId: (fileOwnerId) => storedFilesWorkflowId(family, fileOwnerId),
    changedSignals: [expiryChangedSignal],
    deletedSignals: [ownerDeletedSignal],
    startAfresh: () => continueAsNew<typeof ownerExpiry>(input),
  });
}

/** What `followExpiry` does through the family, and the signals it listens to. */
export type ExpirySteps = {
  loadExpiry(): Promise<OwnerExpiry>;
  expire(): Promise<ExpiryOutcome>;
  purgeFiles(fileOwnerId: string): Promise<void>;
  fileWorkflowId(fileOwnerId: string): string;
  changedSignals: SignalDefinition[];
  deletedSignals: SignalDefinition[];
  startAfresh(): Promise<never>;
  /**
   * Whether a deletion signalled while waiting ends the workflow without reading the owner again.
   * Only the wrapper replaying histories of `coffreLifecycle`, which read first, passes false.
   */
  endsOnDeletionUnread?: boolean;
};

/** The loop of `ownerExpiry`, shared with the wrappers of the workflow types it replaced. */
export async function followExpiry(steps: ExpirySteps): Promise<string> {
  let changes = 0;
  let deleted = false;
  for (const signal of steps.changedSignals) {
    setHandler(signal, () => {
      changes++;
    });
  }
  for (const signal of steps.deletedSignals) {
    setHandler(signal, () => {
      deleted = true;
    });
  }
  for (;;) {
    if (deleted && steps.endsOnDeletionUnread !== false) return 'deleted';
    if (workflowInfo().continueAsNewSuggested) await steps.startAfresh();
    const seen = changes;
    const changed = () => deleted || changes !== seen;
    const { state, expiresAt } = await steps.loadExpiry();
    if (deleted || state === 'deleted') return 'deleted';
    const at = expiresAt === null ? null : Date.parse(expiresAt);
    if (state === 'expired' || (at !== null && Date.now() >= at)) {
      const outcome = await steps.expire();
      for (const fileOwnerId of outcome.fileOwnerIds) {
        await steps.purgeFiles(fileOwnerId);
        // Its own workflow waits for a deletion to end; one that has ended already is fine.
        await getExternalWorkflowHandle(steps.fileWorkflowId(fileOwnerId))
          .signal(storedFilesDeletedSignal)
          .catch(() => undefined);
      }
      if (outcome.final) return 'expired';
      await condition(changed);
    } else if (at === null) {
      await condition(changed);
    } else {
      await condition(changed, msUntil(at));
    }
  }
}
