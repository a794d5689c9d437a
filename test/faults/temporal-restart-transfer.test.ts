import { createHash } from 'node:crypto';
import test from 'ava';
import { loadConfig } from '../../lib/config.ts';
import { createEventQueries } from '../../lib/db/queries/events.ts';
import { sql } from '../../lib/db/sql.ts';
import { connectTemporal } from '../../lib/temporal.ts';
import { type FileSource, Valise } from '../../sdk/src/index.ts';
import { intakeDocumentWorkflowId } from '../../workflows/ids.ts';
import { transferWorkflowId } from '../../workflows/transferLifecycle.ts';
import { eventually } from '../helpers/api.ts';
import { startPrivateTemporal } from '../helpers/private-services.ts';
import { startApiAndWorker } from '../helpers/processes.ts';
import { storedFor } from '../helpers/storage.ts';
import { startTcpGate } from '../helpers/tcp-gate.ts';
import { content, createTransfer, fetchBytes, links, put, waitForTransfer } from '../helpers/transfers.ts';
import { activityAttempts, activityStarted, runsOf } from '../helpers/workflow-runs.ts';

// The Temporal server restarted in the middle of a transfer's workflow (issue #26), on a Temporal
// of the scenario's own (the stack's keeps serving the other tests). The transfer's scan is held
// mid-stream by a gate in front of clamd, so the workflow is certainly inside its scan when the
// server stops (SIGTERM, as scripts/stack.sh restarts it) and starts again on the same database;
// the API and the worker stay up throughout, as they would in production. Checked: the transfer
// becomes active with its content byte for byte, its workflow has one run, its events are
// recorded once each, and the API starts workflows again (a second transfer goes through).
//
// Then Temporal down (25 s: longer than the API's Temporal client retries) as the SDK sends a
// file's last byte: the PUT stores it but cannot tell the workflow (503). The SDK used to see the
// whole file stored and call the send done, and the transfer waited for its upload deadline, to end
// as if the file never came; it now sends a PUT of nothing, which tells the workflow again.

test('the Temporal server restarted mid-scan: the transfer becomes active once, byte for byte', async (t) => {
  const temporalServer = await startPrivateTemporal();
  t.teardown(() => temporalServer.remove());
  const clamd = loadConfig().clamd;
  const gate = await startTcpGate({ host: clamd.host, port: clamd.port });
  t.teardown(() => gate.close());
  const api = await startApiAndWorker(t, { ...temporalServer.env, CLAMD_PORT: String(gate.port) });
  const temporal = await connectTemporal(api.services.config);
  t.teardown(() => temporal.connection.close());
  const ws = await api.workspace('Temporal restarted');
  const key = ws.keys.live;

  const bytes = content(16 * 1024 * 1024);
  const created = await createTransfer(api, key, { files: [{ name: 'restart.bin', size: bytes.length }] });
  const transferId = created.transfer.id;
  const workflowId = transferWorkflowId(transferId);
  const stalled = gate.hold(256 * 1024);
  t.is((await put(created.upload_urls[0]?.url ?? '', bytes)).status, 200);
  await stalled;
  await activityStarted(temporal, workflowId, ['scanFile']);
  await temporalServer.stop();
  t.log(`injected: the Temporal server stopped (SIGTERM) while ${workflowId} scans, 256 KiB into clamd`);
  const meanwhile = await api.call('GET', `/v1/transfers/${transferId}`, { key });
  t.is(meanwhile.status, 200, 'the API answers from PostgreSQL while Temporal is down');
  t.is(meanwhile.body.status, 'scanning');
  await temporalServer.start();
  t.log('injected: the Temporal server started again on the same database');
  gate.release();

  const active = await waitForTransfer(api, key, transferId, (tr) => tr.status === 'active', 120_000);
  t.is(active.scan_status, 'clean');
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  t.is(active.files[0].sha256, sha256);
  const issued = await links(api, created.transfer.short_code);
  const downloaded = await fetchBytes(issued.body.files[0].download_url);
  t.is(createHash('sha256').update(downloaded.bytes).digest('hex'), sha256, 'byte for byte');

  const runs = await eventually(async () => {
    const found = await runsOf(temporal, workflowId);
    return found.length > 0 ? found : undefined;
  });
  t.deepEqual(
    runs.map((run) => run.status),
    ['RUNNING'],
    'one run of the workflow, waiting for the expiry now',
  );
  const scans = await activityAttempts(temporal, workflowId, 'scanFile');
  t.is(scans.length, 1, 'one scan, finished');
  const events = createEventQueries(api.services.db);
  const tenant = { workspaceId: ws.workspace_id, environment: 'live' as const };
  for (const type of ['transfer.created', 'transfer.scanned', 'transfer.scan_clean']) {
    const fired = (await events.listByType(tenant, type)).filter(
      (event) => (event.data.transfer as { id: string }).id === transferId,
    );
    t.is(fired.length, 1, `${type} recorded once`);
  }
  const files = await api.services.db.any(
    sql.unsafe`SELECT upload_state, scan_status FROM transfer_files WHERE transfer_id = ${transferId}`,
  );
  t.deepEqual(files, [{ upload_state: 'uploaded', scan_status: 'clean' }]);
  const stored = await storedFor(api, transferId);
  t.is(stored.objects.length, 1, 'one object');
  t.deepEqual(stored.uploads, [], 'no multipart upload left open');

  // The API's connection to Temporal came back with it: a new transfer starts its workflow.
  const next = await createTransfer(api, key, { files: [{ name: 'after.bin', size: 1024 }] });
  t.is((await put(next.upload_urls[0]?.url ?? '', content(1024))).status, 200);
  await waitForTransfer(api, key, next.transfer.id, (tr) => tr.status === 'active');
  t.log(
    `checked: active and clean, byte for byte; one workflow run, its scan finished on attempt ${scans[0]}; transfer.created, .scanned, .scan_clean once each; one object, no open upload; a new transfer goes through`,
  );
});

test("the Temporal server down as the last byte lands: the SDK finishes the send, a plain client's transfer and intake submission are found by the re-read", async (t) => {
  const temporalServer = await startPrivateTemporal();
  t.teardown(() => temporalServer.remove());
  // The workflows re-read their stored uploads every 5 s rather than every 5 minutes.
  const api = await startApiAndWorker(t, { ...temporalServer.env, UPLOAD_RECHECK: '5s' });
  const temporal = await connectTemporal(api.services.config);
  t.teardown(() => temporal.connection.close());
  const ws = await api.workspace('Temporal down at upload');
  const key = ws.keys.live;
  const bytes = content(4 * 1024 * 1024);
  const file: FileSource = {
    name: 'landing.bin',
    size: bytes.length,
    stream: (start) => new Blob([new Uint8Array(bytes.subarray(start))]).stream(),
  };
  const puts: string[] = [];
  const valise = new Valise({
    apiKey: key,
    baseUrl: api.url,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === 'PUT') puts.push(String(response.status));
      return response;
    },
  });
  const session = await valise.transfers.prepare({ files: [file] });
  const workflowId = transferWorkflowId(session.transfer.id);
  // A client that PUTs once and never comes back, whatever the answer (curl, a script).
  const plain = await createTransfer(api, key, { files: [{ name: 'plain.bin', size: bytes.length }] });
  const [plainUpload] = plain.upload_urls;
  if (!plainUpload) throw new Error('no upload URL');
  // And a submission to an intake, by the same kind of client (fileLifecycle, not the transfer's workflow).
  const intake = await api.call('POST', '/v1/intakes', { key, body: { title: 'Temporal down', retention_hours: 1 } });
  if (intake.status !== 201) throw new Error(`intake: ${intake.status} ${intake.text}`);
  const submission = await api.call('POST', `/v1/intakes/${intake.body.id}/submissions`, {
    key: intake.body.publishable_key.key,
    body: { files: [{ name: 'scan.pdf', size: bytes.length }] },
  });
  if (submission.status !== 201) throw new Error(`submission: ${submission.status} ${submission.text}`);
  const documentId: string = submission.body.document.id;
  // The worker is up (each workflow ran its first activity): the files are sent while Temporal is
  // down for longer than the API's Temporal client retries a signal (about 15 s).
  for (const id of [workflowId, intakeDocumentWorkflowId(documentId)]) {
    await eventually(async () => {
      const { events } = await temporal.workflow.getHandle(id).fetchHistory();
      return events?.some((event) => event.activityTaskCompletedEventAttributes) ? true : undefined;
    }, 60_000);
  }
  await temporalServer.stop();
  t.log('injected: the Temporal server stopped (SIGTERM) before the file is sent, for 25 s');
  const back = new Promise((resolve) => setTimeout(resolve, 25_000)).then(async () => {
    await temporalServer.start();
    t.log('injected: the Temporal server started again');
  });
  const [sent, plainPut, submissionPut] = await Promise.all([
    valise.transfers.resume(session, { files: [file], maxResumes: 6 }),
    put(plainUpload.url, bytes),
    put(submission.body.upload_urls[0].url, bytes),
  ]);
  await back;
  t.is(plainPut.status, 503, 'the plain PUT is stored but cannot tell the workflow');
  t.is(submissionPut.status, 503, "the submission's PUT likewise");
  t.is(sent.transfer.id, session.transfer.id);
  t.true(
    puts.every((status) => status === '200' || status === '503'),
    `retryable answers, never a 500: ${puts.join(', ')}`,
  );
  t.true(api.worker.running(), 'the worker outlived the outage');

  const active = await waitForTransfer(api, key, session.transfer.id, (tr) => tr.status === 'active', 60_000);
  t.is(active.files[0].sha256, createHash('sha256').update(bytes).digest('hex'));
  const issued = await links(api, active.short_code);
  t.true((await fetchBytes(issued.body.files[0].download_url)).bytes.equals(bytes), 'byte for byte');
  t.log(`checked: the send completed (PUTs answered ${puts.join(', ')}), the transfer active, its file byte for byte`);

  // Nobody told the plain transfer's workflow; its re-read of the stored uploads finds the file.
  const plainActive = await waitForTransfer(api, key, plain.transfer.id, (tr) => tr.status === 'active', 60_000);
  const plainLinks = await links(api, plainActive.short_code);
  t.true((await fetchBytes(plainLinks.body.files[0].download_url)).bytes.equals(bytes), 'byte for byte');
  t.log(
    "checked: a plain client's PUT answered 503 and never retried: its transfer active all the same, byte for byte",
  );

  // The intake document's workflow re-reads its stored uploads the same way: received, scanned.
  const document = await eventually(async () => {
    const got = await api.call('GET', `/v1/intakes/${intake.body.id}/documents/${documentId}`, { key });
    return got.status === 200 && got.body.status === 'available' ? got.body : undefined;
  }, 60_000);
  t.like(document.files[0], { upload_state: 'uploaded', scan_status: 'clean' });
  t.true((await fetchBytes(document.files[0].download_url)).bytes.equals(bytes), 'byte for byte');
  t.log(
    "checked: the submission's PUT answered 503 and was never retried: the document available all the same, byte for byte",
  );
});
