import {
  ActivityFailure,
  ApplicationFailure,
  getExternalWorkflowHandle,
  proxyActivities,
  type RetryPolicy,
} from '@temporalio/workflow';
import type { createRuleActivities } from '../activities/rules.ts';
import { BOOKKEEPING } from './retry-policies.ts';
import { expiryExtendedSignal, transferWorkflowId } from './transferLifecycle.ts';

type Activities = ReturnType<typeof createRuleActivities>;

/**
 * A rule's action: a receiver or mail server down for a while is waited for,
 * six tries (about five minutes with their timeouts); past that the execution is `failed`.
 */
const RULE_ACTION_RETRY: RetryPolicy = {
  initialInterval: '2 seconds',
  backoffCoefficient: 2,
  maximumInterval: '2 minutes',
  maximumAttempts: 6,
};

// Bookkeeping: database writes, retried until they succeed.
const bookkeeping = proxyActivities<Activities>(BOOKKEEPING);
// The action itself: a receiver or mail server down for a while is waited
// for, about five minutes in all; past that the execution is `failed`.
const action = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: RULE_ACTION_RETRY });

export type RunRuleInput = { ruleId: string; eventId: string };

/** `runRule`: exactly one per (rule, event). */
export const ruleRunWorkflowId = (ruleId: string, eventId: string) => `rule-${ruleId}-${eventId}`;

/**
 * Runs one rule's action for one event (workflow id `rule-<rule>-<event>`)
 * and records the execution: status, error, duration. An `extend_expiry`
 * then tells the transfer's own workflow, which owns the expiry timer.
 */
export async function runRule(input: RunRuleInput): Promise<string> {
  const run = await bookkeeping.startRuleRun(input);
  if (!run) return 'not_run';
  const started = Date.now();
  let error: string | null = null;
  try {
    const outcome = await action.performRuleAction(input);
    if (outcome.extended) {
      const { transferId, expiresAt } = outcome.extended;
      await getExternalWorkflowHandle(transferWorkflowId(transferId))
        .signal(expiryExtendedSignal, expiresAt)
        // The transfer's workflow has ended (the transfer with it): no timer left to move.
        .catch(() => undefined);
    }
  } catch (failure) {
    error = messageOf(failure);
  }
  await bookkeeping.finishRuleRun({
    executionId: run.executionId,
    status: error === null ? 'succeeded' : 'failed',
    error,
    durationMs: Date.now() - started,
  });
  return error === null ? 'succeeded' : 'failed';
}

function messageOf(failure: unknown): string {
  const cause = failure instanceof ActivityFailure ? failure.cause : failure;
  if (cause instanceof ApplicationFailure || cause instanceof Error) return cause.message;
  return String(cause);
}
