import { ActivityFailure, log } from '@temporalio/workflow';

// What the lifecycle workflows share about waiting: for a deadline, and for
// mail that may never go out.

/**
 * The patch id (Temporal's `patched`) of re-reading the stored uploads while they are awaited:
 * histories written before it waited for the signals alone.
 */
export const RECHECK_UPLOADS = 'recheck-uploads';

/** Milliseconds from now until `at` (epoch ms), for `condition()`. */
export function msUntil(at: number): number {
  // condition() treats a timeout of 0 as "no timeout": never pass it.
  return Math.max(1, at - Date.now());
}

/** Mail is best effort: once its retries are spent, the workflow goes on without it. */
export async function bestEffort(send: () => Promise<unknown>): Promise<void> {
  try {
    await send();
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    log.warn('mail not sent', { error: error.message });
  }
}
