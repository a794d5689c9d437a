import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import test from 'ava';
import type { createTransferActivities } from '../../activities/transfers.ts';
import { approvalDecidedSignal, revokedSignal } from '../../workflows/transferLifecycle.ts';
import { bundleWorkflows, untilCalled, withWorker as withBundledWorker } from '../helpers/workflows.ts';

// transferLifecycle against the real Temporal dev server, with stub activities
// on a task queue of their own: the approval circuit as the workflow runs it,
// whatever the order of decision, signal and activation.

type Activities = ReturnType<typeof createTransferActivities>;
type Approval = 'pending' | 'approved' | 'rejected';

let bundle: WorkflowBundle;
test.before(async () => {
  bundle = await bundleWorkflows();
});

/**
 * Stub activities over one in-memory transfer: `approval` is the persisted
 * decision, `calls` what the workflow asked for, in order. scanFile waits for
 * `releaseScan()`, so a test can act while the transfer is scanning.
 */
function stubTransfer(options: { recheckMs?: number } = {}) {
  const state = { approval: 'pending' as Approval, calls: [] as string[] };
  let releaseScan!: () => void;
  const scanReleased = new Promise<void>((resolve) => {
    releaseScan = resolve;
  });
  let scanStarted!: () => void;
  const scanning = new Promise<void>((resolve) => {
    scanStarted = resolve;
  });
  // Far off: each test ends its workflow with the revoked signal once it has seen what it waits for.
  const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
  const activities: Activities = {
    loadTransferPlan: async () => ({
      fileIds: ['file-1'],
      uploadedFileIds: ['file-1'],
      uploadDeadline: expiresAt,
      expiresAt,
      approvalRequired: true,
      approvalStatus: state.approval,
      approvalRecheckMs: options.recheckMs ?? 3_600_000,
      recipient: 'recipient@valise.test',
    }),
    approvalState: async () => {
      state.calls.push(`approvalState:${state.approval}`);
      return state.approval;
    },
    beginScan: async () => {
      state.calls.push('beginScan');
    },
    scanFile: async () => {
      scanStarted();
      await scanReleased;
      state.calls.push('scanFile');
      return 'clean' as const;
    },
    settleScan: async () => {
      state.calls.push('settleScan');
      return 'active' as const;
    },
    endTransfer: async (_id, status, reason) => {
      state.calls.push(`endTransfer:${status}:${reason}`);
    },
    requestApproval: async () => {
      state.calls.push('requestApproval');
    },
    notifyApprovalDecision: async () => {
      state.calls.push(`notifyApprovalDecision:${state.approval}`);
    },
    notifyRecipient: async () => {
      state.calls.push('notifyRecipient');
    },
  };
  return { state, activities, scanning, releaseScan };
}

const withWorker = (activities: Activities, run: (client: Client, taskQueue: string) => Promise<void>) =>
  withBundledWorker(bundle, activities, run);

const after = (calls: string[], first: string, then: string) =>
  calls.includes(first) && calls.indexOf(then, calls.indexOf(first)) > calls.indexOf(first);

const start = (client: Client, taskQueue: string) =>
  client.workflow.start('transferLifecycle', {
    taskQueue,
    workflowId: `test-transfer-${randomUUID()}`,
    args: [{ transferId: randomUUID() }],
  });

test('approved while scanning, signal before the wait: owner told once, no request, recipient mailed after activation', async (t) => {
  const stub = stubTransfer();
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await stub.scanning;
    stub.state.approval = 'approved';
    await handle.signal(approvalDecidedSignal, 'approved');
    stub.releaseScan();
    await untilCalled(stub.state.calls, (calls) => calls.includes('notifyRecipient'), 'the recipient mail');
    await handle.signal(revokedSignal);
    t.is(await handle.result(), 'revoked');
  });
  const { calls } = stub.state;
  t.deepEqual(
    calls.filter((c) => c.startsWith('notify') || c === 'requestApproval'),
    ['notifyApprovalDecision:approved', 'notifyRecipient'],
  );
  t.true(after(calls, 'settleScan', 'notifyRecipient'), 'the link goes out once active');
  t.is(calls.at(-1), 'endTransfer:deleted:revoked');
});

test('approved while scanning, signal never delivered: activation reads the decision and mails the recipient', async (t) => {
  const stub = stubTransfer();
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await stub.scanning;
    stub.state.approval = 'approved';
    stub.releaseScan();
    await untilCalled(stub.state.calls, (calls) => calls.includes('notifyRecipient'), 'the recipient mail');
    await handle.signal(revokedSignal);
    t.is(await handle.result(), 'revoked');
  });
  const { calls } = stub.state;
  t.deepEqual(
    calls.filter((c) => c.startsWith('notify') || c === 'requestApproval'),
    ['notifyApprovalDecision:approved', 'notifyRecipient'],
  );
  t.true(after(calls, 'settleScan', 'notifyRecipient'));
});

test('rejected while scanning: the owner is told, approval is not requested, the recipient is never mailed', async (t) => {
  const stub = stubTransfer();
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await stub.scanning;
    stub.state.approval = 'rejected';
    await handle.signal(approvalDecidedSignal, 'rejected');
    stub.releaseScan();
    // The workflow has looked at the decision after activation: it would have mailed the recipient then.
    await untilCalled(
      stub.state.calls,
      (calls) => after(calls, 'settleScan', 'approvalState:rejected'),
      'the look at activation',
    );
    await handle.signal(revokedSignal);
    t.is(await handle.result(), 'revoked');
  });
  const { calls } = stub.state;
  t.deepEqual(
    calls.filter((c) => c.startsWith('notify') || c === 'requestApproval'),
    ['notifyApprovalDecision:rejected'],
  );
});

test('pending at activation, decided later without a signal: the recheck finds it and mails the recipient', async (t) => {
  const stub = stubTransfer({ recheckMs: 300 });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    stub.releaseScan();
    // Approval is requested once the transfer is active and still undecided.
    await untilCalled(stub.state.calls, (calls) => calls.includes('requestApproval'), 'the approval request');
    stub.state.approval = 'approved';
    await untilCalled(stub.state.calls, (calls) => calls.includes('notifyRecipient'), 'the recipient mail');
    await handle.signal(revokedSignal);
    t.is(await handle.result(), 'revoked');
  });
  const { calls } = stub.state;
  t.deepEqual(
    calls.filter((c) => c.startsWith('notify') || c === 'requestApproval'),
    ['requestApproval', 'notifyApprovalDecision:approved', 'notifyRecipient'],
  );
});
