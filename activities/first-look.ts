import { setTimeout as sleep } from 'node:timers/promises';

/** How long a first look waits, within one attempt, for the transaction that creates its row. */
const COMMIT_WAIT_MS = 2_000;
const LOOK_EVERY_MS = 25;

/**
 * Reads a row a workflow's first activity needs, waiting a little for its commit: a workflow
 * started just before its creating transaction (lib/transfers/create.ts) usually looks before
 * that transaction ends. Waiting here costs one activity attempt; failing at once would cost
 * Temporal a retry with its timer, tasks and history events for nearly every creation. Null
 * once the wait is over: the caller throws its retryable failure, and Temporal takes over.
 */
export async function onceCommitted<T>(read: () => Promise<T | null>): Promise<T | null> {
  const deadline = Date.now() + COMMIT_WAIT_MS;
  for (;;) {
    const row = await read();
    if (row !== null || Date.now() >= deadline) return row;
    await sleep(LOOK_EVERY_MS);
  }
}
