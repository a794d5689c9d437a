import { ActivityFailure, ApplicationFailure, getExternalWorkflowHandle, proxyActivities } from '@temporalio/workflow';
import type { createRuleActivities } from '../activities/rules.ts';
import { transferWorkflowId } from './ids.ts';
import { BOOKKEEPING, RULE_ACTION_RETRY } from './retry-policies.ts';
import { expiryExtendedSignal } from './transferLifecycle.ts';

type Activities = ReturnType<typeof createRuleActivities>;

// Bookkeeping: database writes, retried until they succeed.
const bookkeeping = proxyActivities<Activities>(BOOKKEEPING);
// The action itself: a receiver or mail server down for a while is waited
// for, about five minutes in all; past that the execution is `failed`.
const action = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: RULE_ACTION_RETRY });

export type RunRuleInput = { ruleId: string; eventId: string };

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
