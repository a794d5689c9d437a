import type { ActivityOptions, RetryPolicy } from '@temporalio/workflow';

// The retry policies several workflows share, named once; each workflow proxies its activities
// with these, beside the timeouts that fit the work. A policy only one workflow uses is named in
// that workflow's file (`RULE_ACTION_RETRY` in runRule.ts, `EXPORT_RETRY` in gdprExport.ts).

/**
 * Database and object-store steps (and a webhook attempt's bookkeeping):
 * retried until they succeed, backing off to one try a minute.
 */
export const STORAGE_RETRY: RetryPolicy = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
};

/** A file's scan (decrypt and stream to clamd): retried until it succeeds, backing off to five minutes. */
export const SCAN_RETRY: RetryPolicy = {
  initialInterval: '5 seconds',
  backoffCoefficient: 2,
  maximumInterval: '5 minutes',
};

/** Mail is best effort: five tries, 75 s of waits between them, then the workflow goes on without it. */
export const MAIL_RETRY: RetryPolicy = { initialInterval: '5 seconds', backoffCoefficient: 2, maximumAttempts: 5 };

/**
 * A workflow's first read of the row it was started for, which may race the
 * commit that created it: quick tries for about a minute, then the workflow
 * ends (the transaction rolled back).
 */
export const FIRST_LOOK_RETRY: RetryPolicy = {
  initialInterval: '100 milliseconds',
  backoffCoefficient: 2,
  maximumInterval: '10 seconds',
  maximumAttempts: 12,
};

/**
 * A tenant's purge (workflows/purgeSandbox.ts): retried until it succeeds, backing off to five
 * minutes; each try goes on where the last stopped.
 */
export const PURGE_RETRY: RetryPolicy = {
  initialInterval: '5 seconds',
  backoffCoefficient: 2,
  maximumInterval: '5 minutes',
};

/** Short database writes: the key timers and a rule run's bookkeeping. */
export const BOOKKEEPING: ActivityOptions = { startToCloseTimeout: '30 seconds', retry: STORAGE_RETRY };
