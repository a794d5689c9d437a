import type { ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { eventually, startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';
import { kill, restartTemporal, startWorker } from '../helpers/processes.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { temporalServerInfo, workerPolling } from '../helpers/temporal-server.ts';
import { content, createTransfer, fetchBytes, links, put, waitForTransfer } from '../helpers/transfers.ts';

// The production-shaped Temporal (VALISE_TEMPORAL=server: the Temporal server
// with PostgreSQL persistence, scripts/temporal-server.sh) runs Valise's
// workflows as the dev server does, and keeps them across a restart.
// scripts/test.sh runs this file last, alone, after switching the test stack's
// Temporal to that flavour; the file starts its own worker.

const taskQueue = `temporal-server-${randomUUID()}`;
let api: TestApi;
let ws: TestWorkspace;
let worker: ChildProcess;

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

test.before(async () => {
  api = await startApi({ TEMPORAL_TASK_QUEUE: taskQueue });
  worker = startWorker({ TEMPORAL_TASK_QUEUE: taskQueue });
  ws = await api.workspace('Temporal server flavour');
  // Restarted under a worker still connecting, Temporal would make it exit.
  const { address, namespace } = api.services.config.temporal;
  await workerPolling(address, namespace, taskQueue);
});
test.after.always(async () => {
  await kill(worker);
  await api.close();
});

test.serial('the Temporal the tests run on is the server on PostgreSQL, not the dev server', async (t) => {
  const info = await temporalServerInfo(process.env.TEMPORAL_ADDRESS ?? '');
  t.is(info.persistence, 'postgres12', 'run by scripts/test.sh after VALISE_TEMPORAL=server scripts/stack.sh start');
  t.is(info.visibility, 'postgres12');
  t.is(info.server_version, '1.30.4');
});

test.serial('a transfer created before a Temporal restart is uploaded, scanned and downloaded after it', async (t) => {
  const bytes = content(3 * 1024 * 1024 + 17);
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'report.bin', size: bytes.length }] });
  // Its workflow now waits for the upload: its state is in PostgreSQL only.
  await restartTemporal();
  const uploaded = await put(created.upload_urls[0]?.url ?? '', bytes);
  t.is(uploaded.status, 200, JSON.stringify(uploaded.body));

  const active = await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active', 90_000);
  t.is(active.scan_status, 'clean');
  const issued = await links(api, created.transfer.short_code);
  t.is(issued.status, 200, issued.text);
  const download = await fetchBytes(issued.body.files[0].download_url);
  t.is(download.status, 200);
  t.is(sha256(download.bytes), sha256(bytes));
});

test.serial('a transfer.created event reaches its webhook, signed', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const hook = await api.call('POST', '/v1/webhooks', {
    key: ws.keys.live,
    body: { url: receiver.url('/hook'), events: ['transfer.created'] },
  });
  t.is(hook.status, 201, hook.text);
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'a.txt', size: 3 }] });

  const delivery = await eventually(async () =>
    receiver.received.find((entry) => JSON.parse(entry.body).data?.transfer?.id === created.transfer.id),
  );
  const headers = Object.fromEntries(Object.entries(delivery.headers).map(([name, value]) => [name, String(value)]));
  t.notThrows(() => new Webhook(hook.body.secret).verify(delivery.body, headers));
  t.is(JSON.parse(delivery.body).type, 'transfer.created');
});
