import {
  condition,
  continueAsNew,
  defineSignal,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { createIntakeActivities } from '../activities/intakes.ts';
import { BOOKKEEPING, FIRST_LOOK_RETRY } from './retry-policies.ts';
import { msUntil } from './waiting.ts';

type Activities = ReturnType<typeof createIntakeActivities>;

const storage = proxyActivities<Activities>(BOOKKEEPING);
const firstLook = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: FIRST_LOOK_RETRY });

/** The intake's expiry changed (set, moved or removed): read it again. */
export const intakeExpiryChangedSignal = defineSignal('intakeExpiryChanged');
export const intakeDeletedSignal = defineSignal('intakeDeleted');

/**
 * Owns an intake's expiry (workflow id `intake-<id>`): sleeps until `expires_at`, then ends an
 * open intake as `expired`. Its owner may move or remove the expiry at any time, reopening an
 * expired intake; each change is a signal to read the row again. An intake may live for years and
 * be edited often: when its history grows long, the workflow starts afresh from the row.
 */
export async function intakeLifecycle(input: { intakeId: string }): Promise<string> {
  const { intakeId } = input;
  let changes = 0;
  let deleted = false;
  setHandler(intakeExpiryChangedSignal, () => {
    changes++;
  });
  setHandler(intakeDeletedSignal, () => {
    deleted = true;
  });
  for (;;) {
    if (deleted) return 'deleted';
    if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof intakeLifecycle>(input);
    const seen = changes;
    const changed = () => deleted || changes !== seen;
    const { status, expiresAt } = await firstLook.loadIntakeExpiry(intakeId);
    if (deleted || status === 'deleted') return 'deleted';
    const at = expiresAt === null ? null : Date.parse(expiresAt);
    if (at !== null && Date.now() >= at) {
      await storage.expireIntake(intakeId);
      await condition(changed);
    } else if (at === null) {
      await condition(changed);
    } else {
      await condition(changed, msUntil(at));
    }
  }
}
