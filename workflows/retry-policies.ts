import type { ActivityOptions, RetryPolicy } from '@temporalio/workflow';

// Every retry policy of the workflows, named once; each workflow proxies its
// activities with these, beside the timeouts that fit the work.

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
 * A rule's action: a receiver or mail server down for a while is waited for,
 * six tries (about five minutes with their timeouts); past that the execution is `failed`.
 */
export const RULE_ACTION_RETRY: RetryPolicy = {
  initialInterval: '2 seconds',
  backoffCoefficient: 2,
  maximumInterval: '2 minutes',
  maximumAttempts: 6,
};

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

/**
 * A GDPR export's collection and sealing: a database or object store down for a while is waited
 * for, eight tries (about four minutes); past that the export is `failed` and can be asked again.
 */
export const EXPORT_RETRY: RetryPolicy = {
  initialInterval: '2 seconds',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 8,
};

/** Short database writes: the key timers and a rule run's bookkeeping. */
export const BOOKKEEPING: ActivityOptions = { startToCloseTimeout: '30 seconds', retry: STORAGE_RETRY };
