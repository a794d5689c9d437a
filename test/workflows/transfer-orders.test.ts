import test from 'ava';
import { expiryExtendedSignal, fileUploadedSignal, revokedSignal } from '../../workflows/transferLifecycle.ts';
import {
  mails,
  refused,
  revokeAndEnd,
  runAlone,
  scanned,
  scansSorted,
  stubTransfer,
  withLifecycleWorker as withWorker,
} from '../helpers/transfer-lifecycle.ts';
import { untilCalled } from '../helpers/workflows.ts';

// transferLifecycle against the real Temporal dev server, with stub activities
// (one worker for the file, each test's workflow routed to its own stub): each deadline (upload, expiry) and each order
// of uploads, revocation, extension and scan outcome. The approval circuit is
// in transfer-lifecycle.test.ts, whose opening table lists what covers what.

// --- The first look, which may race the commit that created the transfer ---

test('an upload signalled while the first look is retried (before the commit) counts: the scan follows', async (t) => {
  const stub = stubTransfer({ uploaded: [], invisibleFor: 3 });
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await untilCalled(stub.state.calls, (calls) => calls.length > 0, 'the first look');
    await handle.signal(fileUploadedSignal, 'file-1');
    await stub.until('notifyRecipient');
    await revokeAndEnd(t, handle);
  });
  t.deepEqual(stub.state.calls, [
    'loadTransferPlan:not-visible',
    'loadTransferPlan:not-visible',
    'loadTransferPlan:not-visible',
    ...scanned('file-1'),
    'notifyRecipient',
    'endTransfer:deleted:revoked',
  ]);
});

test('revoked while the first look is retried: deleted as revoked once the transfer is seen, never scanned', async (t) => {
  const stub = stubTransfer({ uploaded: [], invisibleFor: 3 });
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await untilCalled(stub.state.calls, (calls) => calls.length > 0, 'the first look');
    await revokeAndEnd(t, handle);
  });
  t.deepEqual(
    stub.state.calls.filter((c) => !c.startsWith('loadTransferPlan')),
    ['endTransfer:deleted:revoked'],
  );
});

// --- Uploads and their deadline ---

test('uploads signalled in any order: each file scanned once, the transfer settled once the last is in', async (t) => {
  const stub = stubTransfer({ files: ['file-1', 'file-2', 'file-3'], uploaded: ['file-2'] });
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await handle.signal(fileUploadedSignal, 'file-3');
    // A repeated signal (an upload retried by its client) changes nothing.
    await handle.signal(fileUploadedSignal, 'file-3');
    await handle.signal(fileUploadedSignal, 'file-1');
    await stub.until('notifyRecipient');
    await revokeAndEnd(t, handle);
  });
  // Files that land before the others are scanned at once, so some scans may come before beginScan.
  const calls = stub.state.calls;
  t.deepEqual(
    calls.filter((c) => c.startsWith('scanFile:')).sort(),
    ['file-1', 'file-2', 'file-3'].map((f) => `scanFile:${f}`),
  );
  t.deepEqual(
    calls.filter((c) => !c.startsWith('scanFile:')),
    ['beginScan', 'settleScan', 'notifyRecipient', 'endTransfer:deleted:revoked'],
  );
  t.true(calls.lastIndexOf('scanFile:file-1') < calls.indexOf('settleScan'), 'settled after every scan');
});

test('a file is scanned as soon as its upload is complete, while the others still upload', async (t) => {
  const stub = stubTransfer({ files: ['file-1', 'file-2'], uploaded: [] });
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await handle.signal(fileUploadedSignal, 'file-1');
    await stub.until('scanFile:file-1');
    t.false(stub.state.calls.includes('beginScan'), 'the transfer is still uploading');
    await handle.signal(fileUploadedSignal, 'file-2');
    await stub.until('notifyRecipient');
    await revokeAndEnd(t, handle);
  });
  t.deepEqual(stub.state.calls, [
    'scanFile:file-1',
    ...scanned('file-2'),
    'notifyRecipient',
    'endTransfer:deleted:revoked',
  ]);
});

test('files are scanned side by side, never more at once than the plan says', async (t) => {
  const files = ['file-1', 'file-2', 'file-3', 'file-4'];
  const stub = stubTransfer({ files, scansInParallel: 2, holdScan: true });
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await untilCalled(stub.state.scanStarts, (started) => started.length >= 2, 'two scans');
    // Held scans: a third would have started by now if the bound let it.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    t.is(stub.state.scanStarts.length, 2);
    stub.releaseScan();
    await stub.until('notifyRecipient');
    await revokeAndEnd(t, handle);
  });
  t.is(stub.state.mostScansAtOnce, 2);
  t.deepEqual([...stub.state.scanStarts].sort(), files);
  t.deepEqual(scansSorted(stub.state.calls), [...scanned(...files), 'notifyRecipient', 'endTransfer:deleted:revoked']);
});

test('a file stored whole with its signal lost: the re-read of the uploads finds it, the transfer is scanned and activated', async (t) => {
  const stub = stubTransfer({ uploaded: [], storedWithoutSignal: ['file-1'], uploadRecheckMs: 300 });
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await stub.until('settleScan');
    await revokeAndEnd(t, handle);
  });
  const { calls } = stub.state;
  t.deepEqual(calls.slice(0, 4), ['uploadedFileIds', 'beginScan', 'scanFile:file-1', 'settleScan']);
  t.true(stub.atOf('uploadedFileIds') < stub.deadlines.uploadDeadline, 'found long before the upload deadline');
});

test('the upload deadline passes with a file missing: deleted as upload_incomplete, never settled', async (t) => {
  const stub = stubTransfer({ files: ['file-1', 'file-2'], uploaded: [], uploadDeadlineInMs: 1_500 });
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await handle.signal(fileUploadedSignal, 'file-1');
    t.is(await handle.result(), 'upload_incomplete');
  });
  // The file that came in was scanned as it landed; at the deadline the stored uploads are read
  // once more (a signal may have been lost); the transfer never went to `scanning`.
  t.deepEqual(stub.state.calls, ['scanFile:file-1', 'uploadedFileIds', 'endTransfer:deleted:upload_incomplete']);
  t.true(
    stub.atOf('endTransfer:deleted:upload_incomplete') >= stub.deadlines.uploadDeadline,
    'not before the deadline',
  );
});

// --- Revocation at each stage ---

test('revoked before the upload: deleted as revoked at once, never scanned or mailed', async (t) => {
  const stub = stubTransfer({ uploaded: [] });
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await revokeAndEnd(t, handle);
    // An upload finishing after the revocation finds the workflow gone.
    await refused(t, handle.signal(fileUploadedSignal, 'file-1'));
  });
  t.deepEqual(stub.state.calls, ['endTransfer:deleted:revoked']);
});

test('revoked during the scan: the scan settles, then the transfer is deleted without mailing the recipient', async (t) => {
  const stub = stubTransfer({ holdScan: true });
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await stub.scanning;
    await handle.signal(revokedSignal);
    stub.releaseScan();
    t.is(await handle.result(), 'revoked');
  });
  t.deepEqual(stub.state.calls, [...scanned('file-1'), 'endTransfer:deleted:revoked']);
});

test('revoked after activation: the expiry wait ends at once and the transfer is deleted as revoked', async (t) => {
  const stub = stubTransfer();
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await stub.until('notifyRecipient');
    await revokeAndEnd(t, handle);
  });
  t.deepEqual(stub.state.calls, [...scanned('file-1'), 'notifyRecipient', 'endTransfer:deleted:revoked']);
});

// --- Scan outcome ---

test('an infected scan ends the workflow as infected: no recipient mail, nothing else ended', async (t) => {
  const stub = stubTransfer({ scanOutcome: 'infected' });
  t.is(await runAlone(stub), 'infected');
  // settleScan itself records the infected state and destroys the content.
  t.deepEqual(stub.state.calls, scanned('file-1'));
});

test('a scan that fails for good ends the transfer as scan_failed: content destroyed, the owner told, no recipient mail', async (t) => {
  const stub = stubTransfer({ scanFailsForGood: 'file-1' });
  t.is(await runAlone(stub), 'scan_failed');
  t.deepEqual(stub.state.calls, [
    'beginScan',
    'scanFile:file-1',
    'failScan:file-1:ChecksumMismatch',
    'notifyScanFailed:file-1',
  ]);
});

test('one file of several failing for good ends the transfer, whichever scans were still running', async (t) => {
  const stub = stubTransfer({ files: ['file-1', 'file-2', 'file-3'], scanFailsForGood: 'file-2', scansInParallel: 1 });
  t.is(await runAlone(stub), 'scan_failed');
  const { calls } = stub.state;
  t.true(calls.includes('failScan:file-2:ChecksumMismatch'));
  t.false(calls.includes('settleScan'), 'never activated');
  t.deepEqual(mails(calls), ['notifyScanFailed:file-2']);
  t.false(
    calls.some((c) => c.startsWith('endTransfer')),
    'failScan is its end',
  );
});

test('a transfer the API ended during its scan, its revocation signal lost: the workflow keeps to the expiry and ends it then', async (t) => {
  // settleScan finds the row already ended; endTransfer at expiry is then a no-op on the row
  // and deletes the objects that remain.
  const stub = stubTransfer({ scanOutcome: 'ended', recipient: null, expiresInMs: 2_000 });
  t.is(await runAlone(stub), 'expired');
  t.deepEqual(stub.state.calls, [...scanned('file-1'), 'endTransfer:expired:expired']);
  t.true(stub.atOf('endTransfer:expired:expired') >= stub.deadlines.expiresAt);
});

// --- Expiry and its extensions ---

test('expiry: an active transfer ends as expired at expires_at, not before', async (t) => {
  const stub = stubTransfer({ expiresInMs: 2_000 });
  t.is(await runAlone(stub), 'expired');
  t.is(stub.state.calls.at(-1), 'endTransfer:expired:expired');
  t.true(stub.atOf('endTransfer:expired:expired') >= stub.deadlines.expiresAt);
});

// The extensions below must reach the workflow before its expiry: 10 s leaves a loaded machine
// time to scan and mail first (3 s did not, beside two other files' workflows and a make test).
test('an extension before the original expiry moves the end to the new expiry', async (t) => {
  const stub = stubTransfer({ expiresInMs: 10_000 });
  let extendedTo = Number.NaN;
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await stub.until('notifyRecipient');
    t.true(Date.now() < stub.deadlines.expiresAt, 'the extension comes before the original expiry');
    extendedTo = stub.deadlines.expiresAt + 2_000;
    await handle.signal(expiryExtendedSignal, new Date(extendedTo).toISOString());
    t.is(await handle.result(), 'expired');
  });
  t.true(stub.atOf('endTransfer:expired:expired') >= extendedTo, 'ended at the extended expiry');
});

test('an extension to an earlier time than the current expiry does not shorten the transfer', async (t) => {
  const stub = stubTransfer({ expiresInMs: 10_000 });
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    await stub.until('notifyRecipient');
    await handle.signal(expiryExtendedSignal, new Date(Date.now()).toISOString());
    t.is(await handle.result(), 'expired');
  });
  t.true(stub.atOf('endTransfer:expired:expired') >= stub.deadlines.expiresAt, 'ended at the original expiry');
});

test('an extension after the original expiry, while still scanning, keeps the transfer until the new expiry', async (t) => {
  const stub = stubTransfer({ expiresInMs: 1_000, holdScan: true });
  let extendedTo = Number.NaN;
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
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
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
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
  await withWorker(stub.activities, async (start) => {
    const handle = await start();
    t.is(await handle.result(), 'expired');
    await refused(t, handle.signal(expiryExtendedSignal, new Date(Date.now() + 60_000).toISOString()));
  });
  t.deepEqual(
    stub.state.calls.filter((c) => c.startsWith('endTransfer')),
    ['endTransfer:expired:expired'],
  );
});

// --- Mail is best effort ---

test('a recipient mail refused for good does not hold the transfer back: it still ends at expiry', async (t) => {
  const stub = stubTransfer({ recipientMailFails: true, expiresInMs: 2_000 });
  t.is(await runAlone(stub), 'expired');
  t.deepEqual(stub.state.calls, [...scanned('file-1'), 'notifyRecipient', 'endTransfer:expired:expired']);
});
