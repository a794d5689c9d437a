import { continueAsNew, defineQuery, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { createMasterKeyActivities } from '../activities/master-keys.ts';
import { BOOKKEEPING, STORAGE_RETRY } from './retry-policies.ts';

type Activities = ReturnType<typeof createMasterKeyActivities>;

const bookkeeping = proxyActivities<Activities>(BOOKKEEPING);
// One batch is one transaction over a few hundred rows, well under a second: a worker that dies
// holding it is noticed when this timeout ends, and the batch runs again elsewhere (it finds done
// what was committed). An attempt that outlives it is harmless: its writes are compare-and-set.
const rewrapping = proxyActivities<Activities>({ startToCloseTimeout: '15 seconds', retry: STORAGE_RETRY });

/** Values re-wrapped per batch (one transaction), unless the input says otherwise. */
export const REWRAP_BATCH_SIZE = 500;
/** Batches per run: past this, the workflow continues as new, so its history stays short. */
export const REWRAP_BATCHES_PER_RUN = 100;

export type RewrapDataKeysInput = {
  /** The master key every wrapped value should end under: the keyring's current one. */
  targetKeyId: string;
  batchSize?: number;
  batchesPerRun?: number;
  /** Where a continued run resumes: the column (`table.column`) and the last row done in it. */
  resumeAt?: { place: string; after: string | null };
  /** Counts carried across continued runs. */
  progress?: RewrapProgress;
};

export type RewrapProgress = {
  /** The column being re-wrapped (`table.column`), null before the first and after the last. */
  place: string | null;
  /** Columns finished, of `places`. */
  placesDone: number;
  places: number;
  batches: number;
  rewrapped: number;
  /** Values that would not open, left as they were (the first ones named in `failures`). */
  failed: number;
  failures: string[];
  runs: number;
  phase: 'rewrapping' | 'completed';
};

/** What the rotation has done so far, for the CLI (`admin keys status --workflow`) and the Temporal UI. */
export const rewrapProgressQuery = defineQuery<RewrapProgress>('progress');

/** `rewrapDataKeys`: one per target key, so starting a rotation twice finds the one that runs. */
export const rewrapDataKeysWorkflowId = (targetKeyId: string) => `rewrap-data-keys-${targetKeyId}`;

const FAILURES_KEPT = 50;

/**
 * Re-wraps every value the master keyring protects under `targetKeyId` (docs/encryption.md,
 * "Master keys"): column by column as the families declare them, a batch per transaction, values
 * already under the target skipped. Resumable: a batch interrupted by a dead worker runs again and
 * finds its committed work done; after `batchesPerRun` batches the workflow continues as new from
 * where it is. Answers the counts; the `progress` query shows them while it runs.
 */
export async function rewrapDataKeys(input: RewrapDataKeysInput): Promise<RewrapProgress> {
  const batchSize = input.batchSize ?? REWRAP_BATCH_SIZE;
  const batchesPerRun = input.batchesPerRun ?? REWRAP_BATCHES_PER_RUN;
  const progress: RewrapProgress = input.progress
    ? { ...input.progress, runs: input.progress.runs + 1 }
    : {
        place: null,
        placesDone: 0,
        places: 0,
        batches: 0,
        rewrapped: 0,
        failed: 0,
        failures: [],
        runs: 1,
        phase: 'rewrapping',
      };
  setHandler(rewrapProgressQuery, () => progress);
  const places = await bookkeeping.listKeyWrappedPlaces();
  progress.places = places.length;
  const start = input.resumeAt ? Math.max(0, places.indexOf(input.resumeAt.place)) : 0;
  let batchesThisRun = 0;
  for (let index = start; index < places.length; index++) {
    const place = places[index] as string;
    progress.place = place;
    progress.placesDone = index;
    let after = input.resumeAt && index === start ? input.resumeAt.after : null;
    for (;;) {
      if (batchesThisRun >= batchesPerRun || workflowInfo().continueAsNewSuggested) {
        await continueAsNew<typeof rewrapDataKeys>({
          targetKeyId: input.targetKeyId,
          batchSize,
          batchesPerRun,
          resumeAt: { place, after },
          progress,
        });
      }
      const batch = await rewrapping.rewrapKeyBatch(place, input.targetKeyId, after, batchSize);
      batchesThisRun++;
      progress.batches++;
      progress.rewrapped += batch.rewrapped;
      progress.failed += batch.failed;
      progress.failures = [...progress.failures, ...batch.failures].slice(0, FAILURES_KEPT);
      after = batch.last;
      if (batch.done) break;
    }
  }
  progress.place = null;
  progress.placesDone = places.length;
  progress.phase = 'completed';
  return progress;
}
