import { createHash, randomUUID } from 'node:crypto';
import test from 'ava';
import { createEventQueries } from '../../lib/db/queries/events.ts';
import { connectTemporal } from '../../lib/temporal.ts';
import { eventually, startApi } from '../helpers/api.ts';
import { kill, startWorker } from '../helpers/processes.ts';
import { content, createTransfer, fetchBytes, links, put, waitForTransfer } from '../helpers/transfers.ts';

// Kills the worker (SIGKILL, no goodbye) while it scans a transfer, starts a
// new one, and checks the transfer completes once, with nothing lost or doubled.

test('a worker killed during finalisation is replaced and the transfer completes, nothing lost', async (t) => {
  const taskQueue = `fault-${randomUUID()}`;
  const api = await startApi({ TEMPORAL_TASK_QUEUE: taskQueue });
  let worker = startWorker({ TEMPORAL_TASK_QUEUE: taskQueue });
  t.teardown(async () => {
    await kill(worker);
    await api.close();
  });
  const ws = await api.workspace('Fault');
  const data = content(200 * 1024 * 1024);
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'big.bin', size: data.length }] });
  t.is((await put(created.upload_urls[0]?.url ?? '', data)).status, 200);

  // Kill only once the scan activity is running on the worker (Temporal says it has started).
  const temporal = await connectTemporal(api.services.config);
  t.teardown(() => temporal.connection.close());
  const handle = temporal.workflow.getHandle(`transfer-${created.transfer.id}`);
  await eventually(async () => {
    const { raw } = await handle.describe();
    const scanning = (raw.pendingActivities ?? []).find(
      (activity) => activity.activityType?.name === 'scanFile' && Number(activity.state) === 2, // PENDING_ACTIVITY_STATE_STARTED
    );
    return scanning ? true : undefined;
  }, 60_000);
  await kill(worker);
  // `sh` execs node, so the child is the worker itself: nothing is left to finish the scan.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const stalled = await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live });
  t.is(stalled.body.status, 'scanning', 'without a worker the transfer waits');

  worker = startWorker({ TEMPORAL_TASK_QUEUE: taskQueue });
  const active = await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active', 120_000);
  t.is(active.scan_status, 'clean');
  t.is(active.files[0].sha256, createHash('sha256').update(data).digest('hex'));

  const events = createEventQueries(api.services.db);
  const tenant = { workspaceId: ws.workspace_id, environment: 'live' as const };
  for (const type of ['transfer.created', 'transfer.scanned', 'transfer.scan_clean']) {
    const fired = await eventually(async () => {
      const all = await events.listByType(tenant, type);
      return all.length > 0 ? all : undefined;
    });
    t.is(fired.length, 1, `${type} recorded exactly once`);
  }
  // The history proves the kill landed mid-scan: the scan activity needed a second attempt.
  const history = await handle.fetchHistory();
  const attempts = (history.events ?? [])
    .map((event) => event.activityTaskStartedEventAttributes?.attempt ?? 0)
    .filter((attempt) => attempt > 0);
  t.true(Math.max(...attempts) >= 2, `an activity was retried after the kill (attempts: ${attempts.join(',')})`);

  const issued = await links(api, created.transfer.short_code);
  const downloaded = await fetchBytes(issued.body.files[0].download_url);
  t.true(downloaded.bytes.equals(data), 'the content survived byte for byte');
});
