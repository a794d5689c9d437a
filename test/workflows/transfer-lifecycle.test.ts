import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type WorkflowBundle,
} from '@temporalio/worker';
import test from 'ava';
import type { createTransferActivities } from '../../activities/transfers.ts';
import { loadConfig } from '../../lib/config.ts';
import { approvalDecidedSignal } from '../../workflows/transferLifecycle.ts';

// transferLifecycle against the real Temporal dev server, with stub activities
// on a task queue of their own: the approval circuit as the workflow runs it,
// whatever the order of decision, signal and activation.

type Activities = ReturnType<typeof createTransferActivities>;
type Approval = 'pending' | 'approved' | 'rejected';
const config = loadConfig();
const workflowsPath = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));

Runtime.install({ logger: new DefaultLogger('ERROR') });
let bundle: WorkflowBundle;
test.before(async () => {
  bundle = await bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') });
});

/**
 * Stub activities over one in-memory transfer: `approval` is the persisted
 * decision, `calls` what the workflow asked for, in order. scanFile waits for
 * `releaseScan()`, so a test can act while the transfer is scanning.
 */
function stubTransfer(options: { expiresInMs: number; recheckMs?: number }) {
  const state = { approval: 'pending' as Approval, calls: [] as string[] };
  let releaseScan!: () => void;
  const scanReleased = new Promise<void>((resolve) => {
    releaseScan = resolve;
  });
  let scanStarted!: () => void;
  const scanning = new Promise<void>((resolve) => {
    scanStarted = resolve;
  });
  const expiresAt = new Date(Date.now() + options.expiresInMs).toISOString();
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

async function withWorker(activities: Activities, run: (client: Client, taskQueue: string) => Promise<void>) {
  const taskQueue = `test-${randomUUID()}`;
  const nativeConnection = await NativeConnection.connect({ address: config.temporal.address });
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const worker = await Worker.create({
    connection: nativeConnection,
    namespace: config.temporal.namespace,
    taskQueue,
    workflowBundle: bundle,
    activities,
  });
  try {
    await worker.runUntil(run(client, taskQueue));
  } finally {
    await connection.close();
    await nativeConnection.close();
  }
}

const start = (client: Client, taskQueue: string) =>
  client.workflow.start('transferLifecycle', {
    taskQueue,
    workflowId: `test-transfer-${randomUUID()}`,
    args: [{ transferId: randomUUID() }],
  });

test('approved while scanning, signal before the wait: owner told once, no request, recipient mailed after activation', async (t) => {
  const stub = stubTransfer({ expiresInMs: 6_000 });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await stub.scanning;
    stub.state.approval = 'approved';
    await handle.signal(approvalDecidedSignal, 'approved');
    stub.releaseScan();
    t.is(await handle.result(), 'expired');
  });
  const { calls } = stub.state;
  t.deepEqual(
    calls.filter((c) => c.startsWith('notify') || c === 'requestApproval'),
    ['notifyApprovalDecision:approved', 'notifyRecipient'],
  );
  t.true(calls.indexOf('notifyRecipient') > calls.indexOf('settleScan'), 'the link goes out once active');
  t.is(calls.at(-1), 'endTransfer:expired:expired');
});

test('approved while scanning, signal never delivered: activation reads the decision and mails the recipient', async (t) => {
  const stub = stubTransfer({ expiresInMs: 6_000 });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await stub.scanning;
    stub.state.approval = 'approved';
    stub.releaseScan();
    t.is(await handle.result(), 'expired');
  });
  const { calls } = stub.state;
  t.false(calls.includes('requestApproval'));
  t.true(calls.includes('notifyApprovalDecision:approved'));
  t.true(calls.indexOf('notifyRecipient') > calls.indexOf('settleScan'));
});

test('rejected while scanning: the owner is told, approval is not requested, the recipient is never mailed', async (t) => {
  const stub = stubTransfer({ expiresInMs: 6_000 });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await stub.scanning;
    stub.state.approval = 'rejected';
    await handle.signal(approvalDecidedSignal, 'rejected');
    stub.releaseScan();
    t.is(await handle.result(), 'expired');
  });
  const { calls } = stub.state;
  t.deepEqual(
    calls.filter((c) => c.startsWith('notify') || c === 'requestApproval'),
    ['notifyApprovalDecision:rejected'],
  );
});

test('pending at activation, decided later without a signal: the recheck finds it and mails the recipient', async (t) => {
  const stub = stubTransfer({ expiresInMs: 10_000, recheckMs: 300 });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    stub.releaseScan();
    // Approval is requested once the transfer is active and still undecided.
    for (let waited = 0; !stub.state.calls.includes('requestApproval'); waited += 50) {
      if (waited > 5_000) throw new Error('approval was never requested');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    stub.state.approval = 'approved';
    t.is(await handle.result(), 'expired');
  });
  const { calls } = stub.state;
  t.deepEqual(
    calls.filter((c) => c.startsWith('notify') || c === 'requestApproval'),
    ['requestApproval', 'notifyApprovalDecision:approved', 'notifyRecipient'],
  );
});
