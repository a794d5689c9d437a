import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import test from 'ava';
import type { createRuleActivities } from '../../activities/rules.ts';
import type { createTransferActivities } from '../../activities/transfers.ts';
import { ruleRunWorkflowId, runRule } from '../../workflows/runRule.ts';
import { transferLifecycle, transferWorkflowId } from '../../workflows/transferLifecycle.ts';
import { bundleWorkflows, withWorker } from '../helpers/workflows.ts';

// runRule against the real Temporal dev server, with stub activities on a task
// queue of its own: how a run is opened, acted on, recorded and followed up.
// Which action a rule's kind performs is decided inside the one
// `performRuleAction` activity (activities/rules.ts, tested against the real
// stack in test/rule-actions.test.ts); the workflow sees only its outcome.

type RuleActivities = ReturnType<typeof createRuleActivities>;
type Finished = Parameters<RuleActivities['finishRuleRun']>[0];

let bundle: WorkflowBundle;
test.before(async () => {
  bundle = await bundleWorkflows();
});

function stubRule(perform: RuleActivities['performRuleAction'], options: { opens?: boolean } = {}) {
  const calls: string[] = [];
  const finished: Finished[] = [];
  const activities: RuleActivities = {
    startRuleRun: async () => {
      calls.push('startRuleRun');
      return options.opens === false ? null : { executionId: 'execution-1' };
    },
    performRuleAction: async (ref) => {
      calls.push('performRuleAction');
      return perform(ref);
    },
    finishRuleRun: async (input) => {
      calls.push('finishRuleRun');
      finished.push(input);
    },
  };
  return { calls, finished, activities };
}

function run(client: Client, taskQueue: string) {
  const ruleId = randomUUID();
  const eventId = randomUUID();
  return client.workflow.execute(runRule, {
    taskQueue,
    workflowId: ruleRunWorkflowId(ruleId, eventId),
    args: [{ ruleId, eventId }],
    workflowExecutionTimeout: '1 minute',
  });
}

test('a run that succeeds is recorded succeeded, with no error and its duration', async (t) => {
  const stub = stubRule(async () => ({}));
  await withWorker(bundle, stub.activities, async (client, taskQueue) => {
    t.is(await run(client, taskQueue), 'succeeded');
  });
  t.deepEqual(stub.calls, ['startRuleRun', 'performRuleAction', 'finishRuleRun']);
  t.like(stub.finished[0], { executionId: 'execution-1', status: 'succeeded', error: null });
  t.true((stub.finished[0]?.durationMs ?? -1) >= 0);
});

test('a run that is not opened (finished before, rule deleted or disabled) acts on nothing', async (t) => {
  const stub = stubRule(async () => ({}), { opens: false });
  await withWorker(bundle, stub.activities, async (client, taskQueue) => {
    t.is(await run(client, taskQueue), 'not_run');
  });
  t.deepEqual(stub.calls, ['startRuleRun']);
});

test('a non-retryable failure is tried once and recorded as a failed execution with its message', async (t) => {
  const stub = stubRule(async () => {
    throw ApplicationFailure.nonRetryable('the transfer has no recipient to mail', 'NoRecipient');
  });
  await withWorker(bundle, stub.activities, async (client, taskQueue) => {
    t.is(await run(client, taskQueue), 'failed');
  });
  t.deepEqual(stub.calls, ['startRuleRun', 'performRuleAction', 'finishRuleRun']);
  t.like(stub.finished[0], { status: 'failed', error: 'the transfer has no recipient to mail' });
});

test('a retryable failure is retried on the action policy, and the run succeeds when the action does', async (t) => {
  let tries = 0;
  const stub = stubRule(async () => {
    tries++;
    if (tries === 1) throw new Error('receiver answered 503');
    return {};
  });
  await withWorker(bundle, stub.activities, async (client, taskQueue) => {
    t.is(await run(client, taskQueue), 'succeeded');
  });
  t.is(tries, 2);
  t.like(stub.finished[0], { status: 'succeeded', error: null });
});

test('extend_expiry tells the transfer workflow: it ends at the new expiry, not the old one', async (t) => {
  const transferId = randomUUID();
  const oldExpiry = Date.now() + 4_000;
  const newExpiry = oldExpiry + 2_000;
  const ended: Array<{ how: string; at: number }> = [];
  const transfer: ReturnType<typeof createTransferActivities> = {
    loadTransferPlan: async () => ({
      fileIds: [],
      uploadedFileIds: [],
      uploadDeadline: new Date(oldExpiry).toISOString(),
      expiresAt: new Date(oldExpiry).toISOString(),
      approvalRequired: false,
      approvalStatus: null,
      approvalRecheckMs: 60_000,
      uploadRecheckMs: 60_000,
      recipient: null,
      scansInParallel: 1,
    }),
    uploadedFileIds: async () => [],
    approvalState: async () => null,
    beginScan: async () => {},
    scanFile: async () => 'clean',
    settleScan: async () => 'active',
    endTransfer: async (_id, _status, reason) => {
      ended.push({ how: reason, at: Date.now() });
    },
    failScan: async () => {},
    notifyScanFailed: async () => {},
    requestApproval: async () => {},
    notifyApprovalDecision: async () => {},
    notifyRecipient: async () => {},
  };
  const stub = stubRule(async () => ({ extended: { transferId, expiresAt: new Date(newExpiry).toISOString() } }));
  await withWorker(bundle, { ...transfer, ...stub.activities }, async (client, taskQueue) => {
    const lifecycle = await client.workflow.start(transferLifecycle, {
      taskQueue,
      workflowId: transferWorkflowId(transferId),
      args: [{ transferId }],
      workflowExecutionTimeout: '1 minute',
    });
    t.is(await run(client, taskQueue), 'succeeded');
    t.is(await lifecycle.result(), 'expired');
    const signals = (await lifecycle.fetchHistory()).events?.flatMap(
      (event) => event.workflowExecutionSignaledEventAttributes?.signalName ?? [],
    );
    t.deepEqual(signals, ['expiryExtended']);
  });
  t.is(ended.length, 1);
  t.true((ended[0]?.at ?? 0) >= newExpiry, 'the transfer lived until the extended expiry');
});

test('extend_expiry on a transfer whose workflow has ended still records the run succeeded', async (t) => {
  const stub = stubRule(async () => ({
    extended: { transferId: randomUUID(), expiresAt: new Date(Date.now() + 60_000).toISOString() },
  }));
  await withWorker(bundle, stub.activities, async (client, taskQueue) => {
    t.is(await run(client, taskQueue), 'succeeded');
  });
  t.like(stub.finished[0], { status: 'succeeded', error: null });
});
