import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import test, { type ExecutionContext } from 'ava';
import type { createTransferActivities } from '../../activities/transfers.ts';
import { transferWorkflowId } from '../../workflows/ids.ts';
import {
  approvalDecidedSignal,
  expiryExtendedSignal,
  fileUploadedSignal,
  revokedSignal,
  transferLifecycle,
} from '../../workflows/transferLifecycle.ts';
import { bundleWorkflows, untilCalled, withWorker as withBundledWorker } from '../helpers/workflows.ts';

// transferLifecycle against the real Temporal dev server, with stub activities
// on a task queue of their own: each deadline (upload, expiry) and each order
// of uploads, revocation, extension, scan outcome and approval decision.
// (transfer-lifecycle.test.ts has the decisions taken while scanning.)

type Activities = ReturnType<typeof createTransferActivities>;
type Approval = Awaited<ReturnType<Activities['approvalState']>>;
type Lifecycle = WorkflowHandle<typeof transferLifecycle>;

let bundle: WorkflowBundle;
test.before(async () => {
  bundle = await bundleWorkflows();
});

type StubOptions = {
  files?: string[];
  /** Files already uploaded when the workflow first looks. */
  uploaded?: string[];
  uploadDeadlineInMs?: number;
  expiresInMs?: number;
  approvalRequired?: boolean;
  approval?: Approval;
  recipient?: string | null;
  recheckMs?: number;
  scanOutcome?: 'active' | 'infected';
  /** scanFile waits for releaseScan(). */
  holdScan?: boolean;
};

/**
 * Stub activities over one in-memory transfer: `calls` is what the workflow
 * asked for, in order, and `at` when each call came. The deadlines count from
 * the workflow's first look (a worker may take seconds to start on a busy machine).
 */
function stubTransfer(options: StubOptions = {}) {
  const files = options.files ?? ['file-1'];
  const deadlines = { uploadDeadline: Number.NaN, expiresAt: Number.NaN };
  const state = { approval: options.approval ?? ('pending' as Approval), calls: [] as string[], at: [] as number[] };
  const record = (call: string) => {
    state.calls.push(call);
    state.at.push(Date.now());
  };
  let releaseScan!: () => void;
  const scanReleased = new Promise<void>((resolve) => {
    releaseScan = resolve;
  });
  if (!options.holdScan) releaseScan();
  let scanStarted!: () => void;
  const scanning = new Promise<void>((resolve) => {
    scanStarted = resolve;
  });
  const activities: Activities = {
    loadTransferPlan: async () => {
      if (Number.isNaN(deadlines.expiresAt)) {
        deadlines.uploadDeadline = Date.now() + (options.uploadDeadlineInMs ?? 3_600_000);
        deadlines.expiresAt = Date.now() + (options.expiresInMs ?? 3_600_000);
      }
      return {
        fileIds: files,
        uploadedFileIds: options.uploaded ?? files,
        uploadDeadline: new Date(deadlines.uploadDeadline).toISOString(),
        expiresAt: new Date(deadlines.expiresAt).toISOString(),
        approvalRequired: options.approvalRequired ?? false,
        approvalStatus: options.approvalRequired ? state.approval : null,
        approvalRecheckMs: options.recheckMs ?? 3_600_000,
        recipient: options.recipient === undefined ? 'recipient@valise.test' : options.recipient,
      };
    },
    approvalState: async () => {
      record(`approvalState:${state.approval}`);
      return state.approval;
    },
    beginScan: async () => record('beginScan'),
    scanFile: async (fileId) => {
      scanStarted();
      await scanReleased;
      record(`scanFile:${fileId}`);
      return 'clean' as const;
    },
    settleScan: async () => {
      record('settleScan');
      return options.scanOutcome ?? 'active';
    },
    endTransfer: async (_id, status, reason) => record(`endTransfer:${status}:${reason}`),
    requestApproval: async () => record('requestApproval'),
    notifyApprovalDecision: async () => record(`notifyApprovalDecision:${state.approval}`),
    notifyRecipient: async () => record('notifyRecipient'),
  };
  const atOf = (call: string) => state.at[state.calls.indexOf(call)] ?? Number.NaN;
  return { state, activities, scanning, releaseScan, deadlines, atOf };
}

const withWorker = (activities: Activities, run: (client: Client, taskQueue: string) => Promise<void>) =>
  withBundledWorker(bundle, activities, run);

const start = (client: Client, taskQueue: string): Promise<Lifecycle> => {
  const transferId = randomUUID();
  return client.workflow.start(transferLifecycle, {
    taskQueue,
    workflowId: transferWorkflowId(transferId),
    args: [{ transferId }],
    // A workflow that hangs fails the test instead of holding it to ava's timeout.
    workflowExecutionTimeout: '1 minute',
  });
};

const mails = (calls: string[]) => calls.filter((c) => c.startsWith('notify') || c === 'requestApproval');

/** Signalling a workflow that has completed is refused: nothing is left to change. */
async function refused(t: ExecutionContext, signalling: Promise<void>) {
  const error = await t.throwsAsync(signalling);
  t.regex(error?.message ?? '', /completed|not found/i);
}

// --- Uploads and their deadline ---

test('uploads signalled in any order: the scan starts once the last file is in, each file scanned', async (t) => {
  const stub = stubTransfer({ files: ['file-1', 'file-2', 'file-3'], uploaded: ['file-2'] });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await handle.signal(fileUploadedSignal, 'file-3');
    // A repeated signal (an upload retried by its client) changes nothing.
    await handle.signal(fileUploadedSignal, 'file-3');
    await handle.signal(fileUploadedSignal, 'file-1');
    await untilCalled(stub.state.calls, (calls) => calls.includes('notifyRecipient'), 'activation');
    await handle.signal(revokedSignal);
    t.is(await handle.result(), 'revoked');
  });
  t.deepEqual(stub.state.calls, [
    'beginScan',
    'scanFile:file-1',
    'scanFile:file-2',
    'scanFile:file-3',
    'settleScan',
    'notifyRecipient',
    'endTransfer:deleted:revoked',
  ]);
});

test('the upload deadline passes with a file missing: deleted as upload_incomplete, never scanned', async (t) => {
  const stub = stubTransfer({ files: ['file-1', 'file-2'], uploaded: [], uploadDeadlineInMs: 1_500 });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await handle.signal(fileUploadedSignal, 'file-1');
    t.is(await handle.result(), 'upload_incomplete');
  });
  t.deepEqual(stub.state.calls, ['endTransfer:deleted:upload_incomplete']);
  t.true(
    stub.atOf('endTransfer:deleted:upload_incomplete') >= stub.deadlines.uploadDeadline,
    'not before the deadline',
  );
});

// --- Revocation at each stage ---

test('revoked before the upload: deleted as revoked at once, never scanned or mailed', async (t) => {
  const stub = stubTransfer({ uploaded: [] });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await handle.signal(revokedSignal);
    t.is(await handle.result(), 'revoked');
    // An upload finishing after the revocation finds the workflow gone.
    await refused(t, handle.signal(fileUploadedSignal, 'file-1'));
  });
  t.deepEqual(stub.state.calls, ['endTransfer:deleted:revoked']);
});

test('revoked during the scan: the scan settles, then the transfer is deleted without mailing the recipient', async (t) => {
  const stub = stubTransfer({ holdScan: true });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await stub.scanning;
    await handle.signal(revokedSignal);
    stub.releaseScan();
    t.is(await handle.result(), 'revoked');
  });
  t.deepEqual(stub.state.calls, ['beginScan', 'scanFile:file-1', 'settleScan', 'endTransfer:deleted:revoked']);
});

test('revoked after activation: the expiry wait ends at once and the transfer is deleted as revoked', async (t) => {
  const stub = stubTransfer();
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await untilCalled(stub.state.calls, (calls) => calls.includes('notifyRecipient'), 'activation');
    await handle.signal(revokedSignal);
    t.is(await handle.result(), 'revoked');
  });
  t.deepEqual(stub.state.calls, [
    'beginScan',
    'scanFile:file-1',
    'settleScan',
    'notifyRecipient',
    'endTransfer:deleted:revoked',
  ]);
});

// --- Scan outcome ---

test('an infected scan ends the workflow as infected: no recipient mail, nothing else ended', async (t) => {
  const stub = stubTransfer({ scanOutcome: 'infected' });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    t.is(await handle.result(), 'infected');
  });
  // settleScan itself records the infected state and destroys the content.
  t.deepEqual(stub.state.calls, ['beginScan', 'scanFile:file-1', 'settleScan']);
});

// --- Expiry and its extensions ---

test('expiry: an active transfer ends as expired at expires_at, not before', async (t) => {
  const stub = stubTransfer({ expiresInMs: 2_000 });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    t.is(await handle.result(), 'expired');
  });
  t.is(stub.state.calls.at(-1), 'endTransfer:expired:expired');
  t.true(stub.atOf('endTransfer:expired:expired') >= stub.deadlines.expiresAt);
});

test('an extension before the original expiry moves the end to the new expiry', async (t) => {
  const stub = stubTransfer({ expiresInMs: 3_000 });
  let extendedTo = Number.NaN;
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await untilCalled(stub.state.calls, (calls) => calls.includes('notifyRecipient'), 'activation');
    t.true(Date.now() < stub.deadlines.expiresAt, 'the extension comes before the original expiry');
    extendedTo = stub.deadlines.expiresAt + 2_000;
    await handle.signal(expiryExtendedSignal, new Date(extendedTo).toISOString());
    t.is(await handle.result(), 'expired');
  });
  t.true(stub.atOf('endTransfer:expired:expired') >= extendedTo, 'ended at the extended expiry');
});

test('an extension to an earlier time than the current expiry does not shorten the transfer', async (t) => {
  const stub = stubTransfer({ expiresInMs: 2_500 });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await untilCalled(stub.state.calls, (calls) => calls.includes('notifyRecipient'), 'activation');
    await handle.signal(expiryExtendedSignal, new Date(Date.now()).toISOString());
    t.is(await handle.result(), 'expired');
  });
  t.true(stub.atOf('endTransfer:expired:expired') >= stub.deadlines.expiresAt, 'ended at the original expiry');
});

test('an extension after the original expiry, while still scanning, keeps the transfer until the new expiry', async (t) => {
  const stub = stubTransfer({ expiresInMs: 1_000, holdScan: true });
  let extendedTo = Number.NaN;
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await stub.scanning;
    extendedTo = stub.deadlines.expiresAt + 2_500;
    // The scan outlasts the original expiry (a large file); the API extends a scanning transfer.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, stub.deadlines.expiresAt - Date.now())));
    await handle.signal(expiryExtendedSignal, new Date(extendedTo).toISOString());
    stub.releaseScan();
    t.is(await handle.result(), 'expired');
  });
  t.true(stub.atOf('settleScan') >= stub.deadlines.expiresAt, 'the scan settled after the original expiry');
  t.true(stub.atOf('endTransfer:expired:expired') >= extendedTo, 'ended at the extended expiry');
});

test('the original expiry passing during the scan, with no extension, ends the transfer right after it settles', async (t) => {
  const stub = stubTransfer({ expiresInMs: 1_000, holdScan: true });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await stub.scanning;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, stub.deadlines.expiresAt - Date.now())));
    stub.releaseScan();
    t.is(await handle.result(), 'expired');
  });
  t.is(stub.state.calls.at(-1), 'endTransfer:expired:expired');
  t.true(stub.atOf('settleScan') >= stub.deadlines.expiresAt);
});

test('an extension after the workflow has expired the transfer is refused: expired stays expired', async (t) => {
  const stub = stubTransfer({ expiresInMs: 1_500 });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    t.is(await handle.result(), 'expired');
    await refused(t, handle.signal(expiryExtendedSignal, new Date(Date.now() + 60_000).toISOString()));
  });
  t.deepEqual(
    stub.state.calls.filter((c) => c.startsWith('endTransfer')),
    ['endTransfer:expired:expired'],
  );
});

// --- Approval: decisions before the upload and after activation ---
// (Decisions during the scan, and the recheck, are in transfer-lifecycle.test.ts.)

test('approval not required: the recipient is mailed on activation, no approval mail at all', async (t) => {
  const stub = stubTransfer({ approvalRequired: false });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await untilCalled(stub.state.calls, (calls) => calls.includes('notifyRecipient'), 'the recipient mail');
    await handle.signal(revokedSignal);
    t.is(await handle.result(), 'revoked');
  });
  t.deepEqual(mails(stub.state.calls), ['notifyRecipient']);
  t.false(stub.state.calls.some((c) => c.startsWith('approvalState')));
});

test('approved before the workflow first looks: owner told once, no request, recipient mailed after activation', async (t) => {
  const stub = stubTransfer({ approvalRequired: true, approval: 'approved', uploaded: [] });
  await withWorker(stub.activities, async (client, taskQueue) => {
    const handle = await start(client, taskQueue);
    await untilCalled(stub.state.calls, (calls) => calls.includes('notifyApprovalDecision:approved'), 'the owner mail');
    await handle.signal(fileUploadedSignal, 'file-1');
    await untilCalled(stub.state.calls, (calls) => calls.includes('notifyRecipient'), 'the recipient mail');
    await handle.signal(revokedSignal);
    t.is(await handle.result(), 'revoked');
  });
  const { calls } = stub.state;
  t.deepEqual(mails(calls), ['notifyApprovalDecision:approved', 'notifyRecipient']);
  t.true(calls.indexOf('settleScan') < calls.indexOf('notifyRecipient'), 'the link goes out once active');
});

for (const decision of ['approved', 'rejected'] as const) {
  test(`${decision} while waiting for the upload (signalled): owner told at once, the recipient mailed only if approved`, async (t) => {
    const stub = stubTransfer({ approvalRequired: true, uploaded: [] });
    await withWorker(stub.activities, async (client, taskQueue) => {
      const handle = await start(client, taskQueue);
      stub.state.approval = decision;
      await handle.signal(approvalDecidedSignal, decision);
      await untilCalled(
        stub.state.calls,
        (calls) => calls.includes(`notifyApprovalDecision:${decision}`),
        'the owner mail',
      );
      t.false(stub.state.calls.includes('beginScan'), 'told before any upload');
      await handle.signal(fileUploadedSignal, 'file-1');
      // Activation is followed by a look at the decision: the recipient would be mailed then.
      await untilCalled(
        stub.state.calls,
        (calls) =>
          calls.includes('settleScan') && calls.indexOf(`approvalState:${decision}`, calls.indexOf('settleScan')) > 0,
        'the look at activation',
      );
      if (decision === 'approved') {
        await untilCalled(stub.state.calls, (calls) => calls.includes('notifyRecipient'), 'the recipient mail');
      }
      await handle.signal(revokedSignal);
      t.is(await handle.result(), 'revoked');
    });
    t.deepEqual(
      mails(stub.state.calls),
      decision === 'approved'
        ? ['notifyApprovalDecision:approved', 'notifyRecipient']
        : ['notifyApprovalDecision:rejected'],
    );
  });

  test(`${decision} after activation (signalled): approval requested once, owner told, the recipient mailed only if approved`, async (t) => {
    const stub = stubTransfer({ approvalRequired: true });
    await withWorker(stub.activities, async (client, taskQueue) => {
      const handle = await start(client, taskQueue);
      await untilCalled(stub.state.calls, (calls) => calls.includes('requestApproval'), 'the approval request');
      stub.state.approval = decision;
      await handle.signal(approvalDecidedSignal, decision);
      await untilCalled(
        stub.state.calls,
        (calls) => calls.includes(`notifyApprovalDecision:${decision}`),
        'the owner mail',
      );
      if (decision === 'approved') {
        await untilCalled(stub.state.calls, (calls) => calls.includes('notifyRecipient'), 'the recipient mail');
      }
      await handle.signal(revokedSignal);
      t.is(await handle.result(), 'revoked');
    });
    t.deepEqual(
      mails(stub.state.calls),
      decision === 'approved'
        ? ['requestApproval', 'notifyApprovalDecision:approved', 'notifyRecipient']
        : ['requestApproval', 'notifyApprovalDecision:rejected'],
    );
  });
}
