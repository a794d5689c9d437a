import test, { type ExecutionContext } from 'ava';
import { fileUploadedSignal } from '../../workflows/transferLifecycle.ts';
import {
  after,
  type Lifecycle,
  mails,
  revokeAndEnd,
  runAlone,
  scanned,
  stubTransfer,
  withLifecycleWorker as withWorker,
} from '../helpers/transfer-lifecycle.ts';
import { untilCalled } from '../helpers/workflows.ts';

// transferLifecycle against the real Temporal dev server, with stub activities
// routed to each test's own stub by one worker (test/helpers/transfer-lifecycle.ts). This file
// has the approval circuit; transfer-orders.test.ts (O) the rest. What covers
// each signal (fileUploaded, revoked, approvalDecided, expiryExtended), each
// deadline (upload, expiry, approval recheck) and each order of them:
//
// | signal order or deadline                                       | test (O: transfer-orders.test.ts)                                  |
// |----------------------------------------------------------------|--------------------------------------------------------------------|
// | fileUploaded or revoked while the first look is retried        | O: "an upload signalled while the first look is retried…"          |
// |                                                                | O: "revoked while the first look is retried…"                      |
// | fileUploaded in any order, repeated, some in at the first look | O: "uploads signalled in any order…"                               |
// | a file in while others still upload (scanned at once)          | O: "a file is scanned as soon as its upload is complete…"          |
// | several files in (scanned side by side, within the bound)      | O: "files are scanned side by side…"                               |
// | upload deadline passes with a file missing                     | O: "the upload deadline passes with a file missing…"               |
// | a file stored with its fileUploaded lost (re-read of uploads)  | O: "a file stored whole with its signal lost…"                     |
// | upload deadline passes, approval pending (no recheck yet)      | "the upload deadline passes while approval is pending…"            |
// | revoked before the upload; fileUploaded after it (refused)     | O: "revoked before the upload…"                                    |
// | revoked during the scan                                        | O: "revoked during the scan…"                                      |
// | revoked once active                                            | O: "revoked after activation…"                                     |
// | scan settles infected                                          | O: "an infected scan…"                                             |
// | scan settles infected, approval pending                        | "infected while approval is pending…"                              |
// | scan settles on a transfer the API ended, its signal lost      | O: "a transfer the API ended during its scan…"                     |
// | a scan fails for good (checksum mismatch)                      | O: "a scan that fails for good…", "one file of several failing…"   |
// | expiry                                                         | O: "expiry: an active transfer ends as expired…"                   |
// | expiryExtended before the expiry                               | O: "an extension before the original expiry…"                      |
// | expiryExtended to an earlier time                              | O: "an extension to an earlier time…"                              |
// | expiry passes during the scan, then expiryExtended             | O: "an extension after the original expiry, while still scanning…" |
// | expiry passes during the scan, no extension                    | O: "the original expiry passing during the scan…"                  |
// | expiryExtended after the end (refused)                         | O: "an extension after the workflow has expired…"                  |
// | recipient mail refused for good                                | O: "a recipient mail refused for good…"                            |
// | no approval required                                           | "approval not required…"                                           |
// | decided before the first look                                  | "approved before the workflow first looks…"                        |
// | approvalDecided while waiting for the upload                   | "approved|rejected while waiting for the upload…"                  |
// | approved during the scan, signal before the wait               | "approved while scanning, signalled before the wait…"              |
// | approved during the scan, signal lost                          | "approved while scanning, signal lost…"                            |
// | rejected during the scan                                       | "rejected while scanning…"                                         |
// | approvalDecided after activation                               | "approved|rejected after activation…"                              |
// | approval recheck: decided once active, signal lost             | "pending at activation, decided later without a signal…"           |
// | decision changed after activation                              | "a decision changed after activation…"                             |
//
// Not covered here: a first look that never succeeds (about a minute of
// retries, then the workflow fails).

type Stub = ReturnType<typeof stubTransfer>;

/** The mails the owner and recipient get once `decision` is taken: the link only if approved. */
const toldOf = (decision: 'approved' | 'rejected') =>
  decision === 'approved'
    ? ['notifyApprovalDecision:approved', 'notifyRecipient']
    : ['notifyApprovalDecision:rejected'];

/** Takes `decision`, signalled, and waits for the owner's mail. */
async function decideAndTell(stub: Stub, handle: Lifecycle, decision: 'approved' | 'rejected') {
  await stub.decide(handle, decision);
  await stub.until(`notifyApprovalDecision:${decision}`);
}

/** Waits for the recipient's mail if the decision calls for one, then revokes to end the workflow. */
async function finish(t: ExecutionContext, stub: Stub, handle: Lifecycle, decision: 'approved' | 'rejected') {
  if (decision === 'approved') await stub.until('notifyRecipient');
  await revokeAndEnd(t, handle);
}

// --- Before the scan ---

test('approval not required: the recipient is mailed on activation, no approval mail at all', async (t) => {
  const stub = stubTransfer({ approvalRequired: false });
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await stub.until('notifyRecipient');
    await revokeAndEnd(t, handle);
  });
  t.deepEqual(mails(stub.state.calls), ['notifyRecipient']);
  t.false(stub.state.calls.some((c) => c.startsWith('approvalState')));
});

test('approved before the workflow first looks: owner told once, no request, recipient mailed after activation', async (t) => {
  const stub = stubTransfer({ approvalRequired: true, approval: 'approved', uploaded: [] });
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await stub.until('notifyApprovalDecision:approved');
    await handle.signal(fileUploadedSignal, 'file-1');
    await stub.until('notifyRecipient');
    await revokeAndEnd(t, handle);
  });
  const { calls } = stub.state;
  t.deepEqual(mails(calls), ['notifyApprovalDecision:approved', 'notifyRecipient']);
  t.true(calls.indexOf('settleScan') < calls.indexOf('notifyRecipient'), 'the link goes out once active');
});

for (const decision of ['approved', 'rejected'] as const) {
  test(`${decision} while waiting for the upload (signalled): owner told at once, the recipient mailed only if approved`, async (t) => {
    const stub = stubTransfer({ approvalRequired: true, uploaded: [] });
    await withWorker(stub.activities, async (start) => {
      const handle = await start();
      await decideAndTell(stub, handle, decision);
      t.false(stub.state.calls.includes('beginScan'), 'told before any upload');
      await handle.signal(fileUploadedSignal, 'file-1');
      // Activation is followed by a look at the decision: the recipient would be mailed then.
      await untilCalled(
        stub.state.calls,
        (calls) => after(calls, 'settleScan', `approvalState:${decision}`),
        'the look at activation',
      );
      await finish(t, stub, handle, decision);
    });
    t.deepEqual(mails(stub.state.calls), toldOf(decision));
  });
}

test('the upload deadline passes while approval is pending: no recheck before activation, nobody mailed', async (t) => {
  const stub = stubTransfer({ approvalRequired: true, uploaded: [], uploadDeadlineInMs: 1_500, recheckMs: 100 });
  t.is(await runAlone(stub), 'upload_incomplete');
  t.deepEqual(stub.state.calls, ['uploadedFileIds', 'endTransfer:deleted:upload_incomplete']);
});

// --- During the scan ---

for (const signalled of [true, false]) {
  test(`approved while scanning, ${signalled ? 'signalled before the wait' : 'signal lost: activation reads the decision'}: owner told once, no request, recipient mailed after activation`, async (t) => {
    const stub = stubTransfer({ approvalRequired: true, holdScan: true });
    await withWorker(stub.activities, async (start) => {
      const handle = await start();
      await stub.scanning;
      await stub.decide(handle, 'approved', signalled);
      stub.releaseScan();
      await stub.until('notifyRecipient');
      await revokeAndEnd(t, handle);
    });
    const { calls } = stub.state;
    t.deepEqual(mails(calls), ['notifyApprovalDecision:approved', 'notifyRecipient']);
    t.true(after(calls, 'settleScan', 'notifyRecipient'), 'the link goes out once active');
    t.is(calls.at(-1), 'endTransfer:deleted:revoked');
  });
}

test('rejected while scanning: the owner is told, approval is not requested, the recipient is never mailed', async (t) => {
  const stub = stubTransfer({ approvalRequired: true, holdScan: true });
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await stub.scanning;
    await stub.decide(handle, 'rejected');
    stub.releaseScan();
    // The workflow has looked at the decision after activation: it would have mailed the recipient then.
    await untilCalled(
      stub.state.calls,
      (calls) => after(calls, 'settleScan', 'approvalState:rejected'),
      'the look at activation',
    );
    await revokeAndEnd(t, handle);
  });
  t.deepEqual(mails(stub.state.calls), ['notifyApprovalDecision:rejected']);
});

test('infected while approval is pending: the circuit ends with the transfer, nobody asked or mailed', async (t) => {
  const stub = stubTransfer({ approvalRequired: true, scanOutcome: 'infected', recheckMs: 100 });
  t.is(await runAlone(stub), 'infected');
  t.deepEqual(stub.state.calls, scanned('file-1'));
});

// --- Once active ---

for (const decision of ['approved', 'rejected'] as const) {
  test(`${decision} after activation (signalled): approval requested once, owner told, the recipient mailed only if approved`, async (t) => {
    const stub = stubTransfer({ approvalRequired: true });
    await withWorker(stub.activities, async (start) => {
      const handle = await start();
      await stub.until('requestApproval');
      await decideAndTell(stub, handle, decision);
      await finish(t, stub, handle, decision);
    });
    t.deepEqual(mails(stub.state.calls), ['requestApproval', ...toldOf(decision)]);
  });
}

test('pending at activation, decided later without a signal: the recheck finds it and mails the recipient', async (t) => {
  const stub = stubTransfer({ approvalRequired: true, recheckMs: 300 });
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    // Approval is requested once the transfer is active and still undecided.
    await stub.until('requestApproval');
    await stub.decide(handle, 'approved', false);
    await stub.until('notifyRecipient');
    await revokeAndEnd(t, handle);
  });
  t.deepEqual(mails(stub.state.calls), ['requestApproval', 'notifyApprovalDecision:approved', 'notifyRecipient']);
});

test('a decision changed after activation: the owner is told each one, the recipient mailed once', async (t) => {
  const stub = stubTransfer({ approvalRequired: true });
  const told = ['requestApproval', 'notifyApprovalDecision:approved', 'notifyRecipient'];
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await stub.until('requestApproval');
    await decideAndTell(stub, handle, 'approved');
    await stub.until('notifyRecipient');
    await decideAndTell(stub, handle, 'rejected');
    await stub.decide(handle, 'approved');
    await untilCalled(stub.state.calls, (calls) => mails(calls).length === told.length + 2, 'the third decision');
    await revokeAndEnd(t, handle);
  });
  t.deepEqual(mails(stub.state.calls), [...told, 'notifyApprovalDecision:rejected', 'notifyApprovalDecision:approved']);
});
