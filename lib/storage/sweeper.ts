import type { DatabasePool } from 'slonik';
import { createLeftoverObjectQueries } from '../db/queries/leftover-objects.ts';
import { STORED_FILES } from '../families.ts';
import { inParallel } from '../in-parallel.ts';
import type { ObjectStore } from './object-store.ts';
import { removeBlob } from './remove-blob.ts';

// The objects of an ended resource are deleted by its workflow, woken by the API's signal
// (revocation, deletion) or its own timer. A signal can be lost (the API process dies after its
// commit, Temporal is unreachable for that call) and a workflow can die; the keys are destroyed
// in the API's transaction either way, but the ciphertext would stay until a timer that may be
// weeks away, or for ever. This loop, in every worker process, is the backstop: every interval it
// deletes the objects of resources ended at least one interval ago whose objects are not marked
// deleted (`objects_deleted_at`), and marks them. So objects are gone within two intervals of the
// end (docs/transfers.md, "Revocation"), whatever happens to one signal.
//
// It is system work across every workspace, like the event dispatcher. Several workers may sweep
// the same rows at once: deleting an object twice, or a missing one, is harmless.

// A transfer whose workflow is gone (it failed, or was terminated by hand) would never expire either:
// each round also ends, through `expire`, the transfers still `active` or `scanning` more than one
// interval past their `expires_at`, as their workflow's timer would have (the event, the audit entry,
// the keys, then the objects). The workflow's own end and this one are the same conditional update,
// so whichever comes second does nothing.

export type SweepDeps = {
  db: DatabasePool;
  objects: ObjectStore;
  /** Ends one overdue transfer as its expiry would (activities/transfers.ts, endTransfer). */
  expire: (transferId: string) => Promise<void>;
};

/** Owners swept per family and per round; a round repeats while a family fills its batch. */
const BATCH = 100;
/** Owners whose objects are deleted at once. */
const CONCURRENCY = 8;

/** How many owners a sweep dealt with, by StoredFiles owner, and the overdue transfers it ended. */
export type SweepResult = Record<string, number>;

/**
 * One sweep: ends the transfers overdue since before `endedBefore`, then deletes the objects of
 * every ended owner (ended before `endedBefore`) still unmarked.
 */
export async function sweepLeftoverObjects(deps: SweepDeps, endedBefore: Date): Promise<SweepResult> {
  const leftovers = createLeftoverObjectQueries(deps.db);
  const swept: SweepResult = {};
  let overdue: readonly string[];
  let ended = 0;
  do {
    overdue = await leftovers.overdueTransfers(endedBefore, BATCH);
    await inParallel(overdue, CONCURRENCY, deps.expire);
    ended += overdue.length;
  } while (overdue.length === BATCH);
  swept.overdue_transfer = ended;
  for (const files of STORED_FILES) {
    let due: readonly string[];
    let count = 0;
    do {
      due = await leftovers.due(files, endedBefore, BATCH);
      await inParallel(due, CONCURRENCY, async (ownerId) => {
        for (const file of await leftovers.files(files, ownerId)) await removeBlob(deps.objects, file);
        await leftovers.markDeleted(files, ownerId);
      });
      count += due.length;
    } while (due.length === BATCH);
    swept[files.owner] = count;
  }
  return swept;
}

export type Sweeper = { stop(): Promise<void> };

/** Sweeps every `intervalMs` until stopped; a failed sweep is logged and the next one tries again. */
export function startObjectSweeper(deps: SweepDeps & { intervalMs: number; log?: (message: string) => void }): Sweeper {
  const log = deps.log ?? ((message) => process.stderr.write(`sweeper: ${message}\n`));
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const round = async () => {
    try {
      const swept = await sweepLeftoverObjects(deps, new Date(Date.now() - deps.intervalMs));
      const total = Object.values(swept).reduce((sum, n) => sum + n, 0);
      if (total > 0) log(`deleted the leftover objects of ${JSON.stringify(swept)}`);
    } catch (error) {
      log(`sweep failed, trying again in ${deps.intervalMs} ms: ${(error as Error).message}`);
    }
    if (!stopped) timer = setTimeout(next, deps.intervalMs);
  };
  const next = () => {
    running = round();
  };
  running = round();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
