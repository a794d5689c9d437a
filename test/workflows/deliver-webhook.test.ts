import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import test from 'ava';
import type { AttemptInput, AttemptOutcome, createWebhookActivities } from '../../activities/webhooks.ts';
import type { WebhookAttempt } from '../../lib/webhooks/attempts.ts';
import { type DeliverWebhookInput, deliverWebhook, deliveryWorkflowId } from '../../workflows/deliverWebhook.ts';
import { bundleWorkflows, withWorker as withBundledWorker } from '../helpers/workflows.ts';

// deliverWebhook against the real Temporal dev server, with a stub attempt on
// a task queue of its own: the retry schedule as the workflow follows it. What
// one attempt does (HTTP, recording, disabling) is activities/webhooks.ts,
// tested against the real stack in test/webhook-deliveries.test.ts.

type Activities = ReturnType<typeof createWebhookActivities>;
type Call = AttemptInput & { at: number };

let bundle: WorkflowBundle;
test.before(async () => {
  bundle = await bundleWorkflows();
});

const withWorker = (activities: Activities, run: (client: Client, taskQueue: string) => Promise<void>) =>
  withBundledWorker(bundle, activities, run);

/** The attempt row the real activity would return for the `index`-th try. */
function attemptRow(input: AttemptInput, succeeded: boolean): WebhookAttempt {
  return {
    id: randomUUID(),
    object: 'webhook_delivery_attempt',
    delivery_id: 'delivery-1',
    webhook_id: input.webhookId,
    event_id: input.eventId,
    event_type: 'transfer.created',
    attempt: input.index + 1,
    trigger: input.trigger,
    url: 'https://hooks.valise.test/in',
    succeeded,
    status_code: succeeded ? 200 : 503,
    duration_ms: 5,
    error: succeeded ? null : 'HTTP 503',
    response_body: null,
    next_retry_at: !succeeded && input.retryInMs !== null ? new Date(Date.now() + input.retryInMs).toISOString() : null,
    created_at: new Date().toISOString(),
  };
}

/** A stub attempt that answers with `answer(call number)`, and the calls it received. */
function stubAttempts(answer: (input: AttemptInput, callNumber: number) => AttemptOutcome | 'throw') {
  const calls: Call[] = [];
  const activities: Activities = {
    attemptDelivery: async (input) => {
      calls.push({ ...input, at: Date.now() });
      const outcome = answer(input, calls.length);
      if (outcome === 'throw') throw ApplicationFailure.retryable('database unavailable', 'DatabaseDown');
      return outcome;
    },
  };
  return { calls, activities };
}

const failed = (input: AttemptInput): AttemptOutcome => ({ outcome: 'failed', attempt: attemptRow(input, false) });
const succeeded = (input: AttemptInput): AttemptOutcome => ({ outcome: 'succeeded', attempt: attemptRow(input, true) });

function deliver(client: Client, taskQueue: string, input: Partial<DeliverWebhookInput>) {
  const eventId = randomUUID();
  const webhookId = randomUUID();
  return client.workflow.execute(deliverWebhook, {
    taskQueue,
    workflowId: deliveryWorkflowId(eventId, webhookId),
    args: [{ eventId, webhookId, trigger: 'scheduled', retryScheduleMs: [], ...input }],
    // A workflow that hangs fails the test instead of holding it to ava's timeout.
    workflowExecutionTimeout: '1 minute',
  });
}

/** Attempts are numbered 0..n-1 in the order they ran, with no gap and no repeat. */
function assertNumbered(t: { deepEqual: (a: unknown, b: unknown, m?: string) => void }, calls: Call[]) {
  t.deepEqual(
    calls.map((call) => call.index),
    calls.map((_, position) => position),
    'attempt indexes run 0..n-1 without gaps',
  );
}

test('a delivery that succeeds at once makes one attempt and returns it', async (t) => {
  const stub = stubAttempts(succeeded);
  await withWorker(stub.activities, async (client, taskQueue) => {
    const result = await deliver(client, taskQueue, { retryScheduleMs: [200, 200] });
    t.is(result.outcome, 'succeeded');
    t.is(result.outcome === 'succeeded' ? result.attempt.attempt : 0, 1);
  });
  t.is(stub.calls.length, 1);
  t.is(stub.calls[0]?.index, 0);
  t.is(stub.calls[0]?.retryInMs !== null, true, 'the first attempt knows the wait before a retry');
});

test('failures wait out the schedule (±20 % jitter) before each retry; the third attempt succeeds', async (t) => {
  const schedule = [400, 800, 1_600];
  const stub = stubAttempts((input, n) => (n < 3 ? failed(input) : succeeded(input)));
  await withWorker(stub.activities, async (client, taskQueue) => {
    const result = await deliver(client, taskQueue, { retryScheduleMs: schedule });
    t.is(result.outcome, 'succeeded');
    t.is(result.outcome === 'succeeded' ? result.attempt.attempt : 0, 3);
  });
  const { calls } = stub;
  t.is(calls.length, 3);
  assertNumbered(t, calls);
  for (const [i, call] of calls.entries()) {
    const wait = schedule[i] as number;
    const retryInMs = call.retryInMs ?? -1;
    t.true(retryInMs >= wait * 0.8 && retryInMs <= wait * 1.2, `wait ${i} is ${retryInMs} ms for ${wait} ms`);
  }
  for (let i = 1; i < calls.length; i++) {
    const previous = calls[i - 1] as Call;
    const gap = (calls[i] as Call).at - previous.at;
    t.true(
      gap >= (previous.retryInMs ?? 0),
      `attempt ${i + 1} came ${gap} ms after, before its ${previous.retryInMs} ms wait`,
    );
  }
});

test('when the schedule runs out the last failure is the result, and it says no retry follows', async (t) => {
  const stub = stubAttempts(failed);
  await withWorker(stub.activities, async (client, taskQueue) => {
    const result = await deliver(client, taskQueue, { retryScheduleMs: [200, 200] });
    t.is(result.outcome, 'failed');
    t.is(result.outcome === 'failed' ? result.attempt.attempt : 0, 3);
    t.is(result.outcome === 'failed' ? result.attempt.next_retry_at : 'unset', null);
  });
  t.is(stub.calls.length, 3, 'one attempt per wait, plus the first');
  assertNumbered(t, stub.calls);
  t.deepEqual(
    stub.calls.map((call) => call.retryInMs === null),
    [false, false, true],
    'only the last attempt is told no retry follows',
  );
});

test('a webhook disabled after its failure window stops the schedule: one look that skips, then no more attempts', async (t) => {
  // The stub plays the activity's part (activities/webhooks.ts): a scheduled
  // failure once the webhook has failed for `disableAfterMs` disables it, and
  // the next scheduled attempt finds it disabled and skips.
  const disableAfterMs = 700;
  let failingSince: number | null = null;
  let disabledAt: number | null = null;
  const stub = stubAttempts((input) => {
    if (disabledAt !== null) return { outcome: 'skipped', reason: 'webhook_disabled' };
    const now = Date.now();
    failingSince ??= now;
    if (now - failingSince >= disableAfterMs) disabledAt = input.index;
    return failed(input);
  });
  const schedule = Array.from({ length: 10 }, () => 200);
  await withWorker(stub.activities, async (client, taskQueue) => {
    const result = await deliver(client, taskQueue, { retryScheduleMs: schedule });
    t.deepEqual(result, { outcome: 'skipped', reason: 'webhook_disabled' });
  });
  const { calls } = stub;
  assertNumbered(t, calls);
  t.not(disabledAt, null);
  t.is(calls.length, (disabledAt ?? 0) + 2, 'exactly one attempt after the one that disabled the webhook');
  t.true(calls.length < schedule.length + 1, 'the schedule had waits left');
  const first = calls[0] as Call;
  t.true((calls[disabledAt ?? 0] as Call).at - first.at >= disableAfterMs, 'disabled only after the failure window');
});

test('a test ping or a redelivery makes one attempt whatever the schedule', async (t) => {
  for (const trigger of ['manual', 'test'] as const) {
    const stub = stubAttempts(failed);
    await withWorker(stub.activities, async (client, taskQueue) => {
      const result = await deliver(client, taskQueue, { trigger, retryScheduleMs: [200, 200] });
      t.is(result.outcome, 'failed', trigger);
    });
    t.deepEqual(
      stub.calls.map((call) => [call.index, call.trigger, call.retryInMs]),
      [[0, trigger, null]],
      trigger,
    );
  }
});

test('an attempt whose activity fails (database down) is retried under the same index, so it is recorded once', async (t) => {
  const stub = stubAttempts((input, n) => (n === 1 ? 'throw' : succeeded(input)));
  await withWorker(stub.activities, async (client, taskQueue) => {
    const result = await deliver(client, taskQueue, { retryScheduleMs: [200] });
    t.is(result.outcome, 'succeeded');
  });
  t.deepEqual(
    stub.calls.map((call) => call.index),
    [0, 0],
    'the retry is the same attempt, not the next one',
  );
});

test('taking over from the sender: it waits until the recorded retry time, then goes on from attempt 2 on the schedule', async (t) => {
  const schedule = [300, 400, 600];
  const stub = stubAttempts((input, n) => (n < 2 ? failed(input) : succeeded(input)));
  const resumeAt = Date.now() + 1_000;
  await withWorker(stub.activities, async (client, taskQueue) => {
    const result = await deliver(client, taskQueue, {
      retryScheduleMs: schedule,
      resume: { index: 1, at: new Date(resumeAt).toISOString() },
    });
    t.is(result.outcome, 'succeeded');
  });
  const { calls } = stub;
  t.deepEqual(
    calls.map((call) => call.index),
    [1, 2],
    'the first attempt was the sender’s: the workflow starts at index 1',
  );
  const [second, third] = calls as [Call, Call];
  t.true(second.at >= resumeAt, `the retry waited for its time (${second.at - resumeAt} ms after it)`);
  const wait = schedule[1] as number;
  const retryInMs = second.retryInMs ?? -1;
  t.true(
    retryInMs >= wait * 0.8 && retryInMs <= wait * 1.2,
    `the next wait is the schedule's second (${retryInMs} ms)`,
  );
  t.true(third.at - second.at >= retryInMs, 'and it is waited out');
});

test('taking over a delivery whose retry time has passed tries at once', async (t) => {
  const stub = stubAttempts(succeeded);
  let started = 0;
  await withWorker(stub.activities, async (client, taskQueue) => {
    started = Date.now();
    await deliver(client, taskQueue, {
      retryScheduleMs: [30_000, 30_000],
      resume: { index: 1, at: new Date(started - 60_000).toISOString() },
    });
  });
  t.deepEqual(
    stub.calls.map((call) => call.index),
    [1],
  );
  // A wait from the schedule would be 24 s at least; a busy machine takes a few to start a workflow.
  t.true((stub.calls[0] as Call).at - started < 15_000, 'no wait from the schedule before it');
});
