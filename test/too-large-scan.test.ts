import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import test from 'ava';
import { createTransferActivities } from '../activities/transfers.ts';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { createMailer } from '../lib/mail/mailer.ts';
import { type ApiResponse, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { findClamd, type PrivateClamd, startClamd } from './helpers/clamd.ts';
import { uniqueAddress, waitForMail } from './helpers/mail.ts';
import { content, createTransfer, fetchBytes, links, put, waitForTransfer } from './helpers/transfers.ts';

// A file past clamd's limits is never passed off as scanned: the transfer is
// activated (a large file can still be sent) but says `not_scanned_too_large`,
// the recipient is warned on the share view and in the mail, and an event is
// recorded. Against a real clamd whose StreamMaxLength is 1 MiB, run by a
// worker of this file's own (the real transfer activities) on its own task
// queue, with an API that starts its workflows there.

const MiB = 1024 * 1024;
const CLAMD = findClamd();
const withClamd = CLAMD ? test : test.skip;

let clamd: PrivateClamd;
let api: TestApi;
let ws: TestWorkspace;
let worker: Worker;
let running: Promise<void>;
let connection: NativeConnection;
test.before(async () => {
  if (!CLAMD) return;
  clamd = await startClamd(CLAMD);
  const taskQueue = `test-too-large-${randomUUID()}`;
  api = await startApi({ TEMPORAL_TASK_QUEUE: taskQueue });
  ws = await api.workspace('Too large to scan');
  const { config, db, objects, keyring } = api.services;
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  connection = await NativeConnection.connect({ address: config.temporal.address });
  worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('../workflows/index.ts', import.meta.url)),
      logger: new DefaultLogger('WARN'),
    }),
    activities: createTransferActivities({
      config,
      db,
      objects,
      keyring,
      scanner: clamd.scanner,
      mailer: createMailer(config),
    }),
  });
  running = worker.run();
});
test.after.always(async () => {
  if (!CLAMD) return;
  worker?.shutdown();
  await running?.catch(() => {});
  await connection?.close();
  await api?.close();
  await clamd?.stop();
});

const events = async (type: string, transferId: string) =>
  (await createEventQueries(api.services.db).listByType({ workspaceId: ws.workspace_id, environment: 'live' }, type))
    .map((row) => row.data as { transfer: { id: string }; [key: string]: unknown })
    .filter((data) => data.transfer.id === transferId);

withClamd(
  'a file past the stream limit: active but not_scanned_too_large, the recipient warned on the share view and in the mail, an event recorded',
  async (t) => {
    const small = content(64 * 1024);
    const large = content(MiB + 4096);
    const recipient = uniqueAddress('warned');
    const created = await createTransfer(api, ws.keys.live, {
      files: [
        { name: 'small.bin', size: small.length },
        { name: 'large.bin', size: large.length },
      ],
      recipient,
    });
    const [smallEntry, largeEntry] = created.upload_urls;
    t.is((await put(smallEntry?.url ?? '', small)).status, 200);
    t.is((await put(largeEntry?.url ?? '', large)).status, 200);
    const active = await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');

    // The transfer API says it was not scanned, and which file.
    t.is(active.scan_status, 'not_scanned_too_large');
    t.deepEqual(
      active.files.map((f: { name: string; scan_status: string }) => [f.name, f.scan_status]),
      [
        ['small.bin', 'clean'],
        ['large.bin', 'not_scanned_too_large'],
      ],
    );

    // The recipient's share view warns, and the files can still be downloaded.
    const view: ApiResponse = await api.call('GET', `/v1/shares/${created.transfer.short_code}`);
    t.is(view.status, 200);
    t.true(view.body.available);
    t.regex(view.body.scan_warning ?? '', /too large to be checked for malware/);
    const issued = await links(api, created.transfer.short_code);
    t.is(issued.status, 200);
    const fetched = await fetchBytes(issued.body.files[1].download_url);
    t.true(fetched.bytes.equals(large));

    // The mail to the recipient carries the warning.
    const mail = await waitForMail(recipient, /.+/);
    t.regex(mail.text, /Warning: Some of these files were too large to be checked for malware/);

    // Events say so: the verdict, and which files were not scanned.
    t.deepEqual(
      (await events('transfer.scanned', created.transfer.id)).map((d) => d.scan_status),
      ['not_scanned_too_large'],
    );
    t.deepEqual(
      (await events('transfer.scan_too_large', created.transfer.id)).map((d) => d.files),
      [[{ id: largeEntry?.file_id, size: large.length }]],
    );
    t.deepEqual(await events('transfer.scan_clean', created.transfer.id), [], 'never reported clean');
  },
);

withClamd('a file of exactly the stream limit is scanned clean, with no warning', async (t) => {
  const bytes = content(MiB);
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'fits.bin', size: bytes.length }] });
  t.is((await put(created.upload_urls[0]?.url ?? '', bytes)).status, 200);
  const active = await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  t.is(active.scan_status, 'clean');
  const view = await api.call('GET', `/v1/shares/${created.transfer.short_code}`);
  t.is(view.body.scan_warning, null);
  t.deepEqual(await events('transfer.scan_too_large', created.transfer.id), []);
});
