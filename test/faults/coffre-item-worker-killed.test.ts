import { createHash } from 'node:crypto';
import test from 'ava';
import { itemUuidOf } from '../../lib/coffres/ids.ts';
import { loadConfig } from '../../lib/config.ts';
import { createEventQueries } from '../../lib/db/queries/events.ts';
import { sql } from '../../lib/db/sql.ts';
import { connectTemporal } from '../../lib/temporal.ts';
import { coffreItemWorkflowId } from '../../workflows/ids.ts';
import { eventually } from '../helpers/api.ts';
import { startApiAndWorker } from '../helpers/processes.ts';
import { storedUnder } from '../helpers/storage.ts';
import { startTcpGate } from '../helpers/tcp-gate.ts';
import { content, fetchBytes, put } from '../helpers/transfers.ts';
import { activityAttempts, activityStarted, runsOf } from '../helpers/workflow-runs.ts';

// The worker killed (SIGKILL) while it scans a vault item just uploaded (issue #26). The worker
// reaches clamd through a gate that stalls the scan's stream once 256 KiB are through (as a slow
// clamd would): the kill lands inside the scan activity, mid-stream, every run. The scan retries
// on a new worker once its heartbeats have stopped for 20 s. Checked through the API and in
// PostgreSQL and MinIO: the item becomes available once, downloads byte for byte, is stored as one
// object, and its upload is recorded once (the `coffre.item_uploaded` event, the access log).

test('a worker killed while it scans a vault item: the item becomes available once, byte for byte', async (t) => {
  const clamd = loadConfig().clamd;
  const gate = await startTcpGate({ host: clamd.host, port: clamd.port });
  t.teardown(() => gate.close());
  const api = await startApiAndWorker(t, { CLAMD_PORT: String(gate.port) });
  const temporal = await connectTemporal(api.services.config);
  t.teardown(() => temporal.connection.close());
  const ws = await api.workspace('Vault item killed');
  const key = ws.keys.live;

  const coffre = await api.call('POST', '/v1/coffres', { key, body: { name: 'Deal room' } });
  t.is(coffre.status, 201, coffre.text);
  const coffreId: string = coffre.body.id;
  const bytes = content(16 * 1024 * 1024);
  const declared = await api.call('POST', `/v1/coffres/${coffreId}/items`, {
    key,
    body: { name: 'contract.bin', size: bytes.length },
  });
  t.is(declared.status, 201, declared.text);
  const itemId: string = declared.body.item.id;
  const workflowId = coffreItemWorkflowId(itemUuidOf(itemId) ?? '');

  const stalled = gate.hold(256 * 1024);
  t.is((await put(declared.body.upload_url.url, bytes)).status, 200);
  await stalled;
  await activityStarted(temporal, workflowId, ['coffres.scanFile']);
  await api.worker.kill();
  t.log(`injected: the worker killed (SIGKILL) inside coffres.scanFile of ${workflowId}, 256 KiB into clamd`);
  gate.release();
  const scanning = await api.call('GET', `/v1/coffres/${coffreId}/items/${itemId}`, { key });
  t.is(scanning.body.status, 'scanning', 'without a worker the item waits, unseen');
  api.worker.start();

  const available = await eventually(async () => {
    const item = await api.call('GET', `/v1/coffres/${coffreId}/items/${itemId}`, { key });
    return item.body.status === 'available' ? item.body : undefined;
  }, 120_000);
  t.is(available.scan_status, 'clean');
  const downloaded = await fetchBytes(available.download_url);
  t.is(downloaded.status, 200);
  t.is(
    createHash('sha256').update(downloaded.bytes).digest('hex'),
    createHash('sha256').update(bytes).digest('hex'),
    'byte for byte',
  );
  const attempts = await activityAttempts(temporal, workflowId, 'coffres.scanFile');
  t.is(attempts.length, 1, 'one scan, finished');
  t.true((attempts[0] ?? 0) >= 2, `the scan was retried after the kill (attempt ${attempts[0]})`);

  // PostgreSQL: one item, available, its key kept; its upload recorded once.
  const rows = await api.services.db.any(
    sql.unsafe`SELECT status, scan_status, data_key_wrapped IS NOT NULL AS keyed FROM coffre_items WHERE coffre_id = ${coffreId}`,
  );
  t.deepEqual(rows, [{ status: 'available', scan_status: 'clean', keyed: true }]);
  const tenant = { workspaceId: ws.workspace_id, environment: 'live' as const };
  const uploadedEvents = (await createEventQueries(api.services.db).listByType(tenant, 'coffre.item_uploaded')).filter(
    (event) => (event.data.item as { id: string }).id === itemId,
  );
  t.is(uploadedEvents.length, 1, 'coffre.item_uploaded once');
  const log = await api.call('GET', `/v1/coffres/${coffreId}/access-log?limit=100`, { key });
  const uploadedEntries = (log.body.data as Array<{ action: string; item_id: string | null }>).filter(
    (entry) => entry.action === 'uploaded' && entry.item_id === itemId,
  );
  t.is(uploadedEntries.length, 1, "the access log's `uploaded` once");
  // MinIO: one object for the item, no multipart upload left open.
  const stored = await storedUnder(api, `live/${ws.workspace_id}/coffres/${coffreId}/`);
  t.deepEqual(stored, { objects: [`live/${ws.workspace_id}/coffres/${coffreId}/${itemUuidOf(itemId)}`], uploads: [] });
  t.deepEqual(
    (await runsOf(temporal, workflowId)).map((run) => run.status),
    ['RUNNING'],
    "one run of the item's workflow (it waits for the item's deletion now)",
  );
  t.log(
    `checked: available and clean after scan attempt ${attempts[0]}; downloaded byte for byte; one row, one object, no open upload; coffre.item_uploaded and the access log's entry once; one workflow run`,
  );
});
