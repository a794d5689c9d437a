import { randomUUID } from 'node:crypto';
import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { eventually, startApi } from '../helpers/api.ts';
import { kill, restartTemporal, startWorker } from '../helpers/processes.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { createTransfer } from '../helpers/transfers.ts';

// Deliveries are waiting to retry against a receiver that is down when the
// worker is killed and the Temporal server restarted. Once both are back and
// the receiver answers, every event arrives, each attempt is recorded once,
// and each delivery succeeds exactly once.

test('a worker kill and a Temporal restart mid-retry lose no delivery and double no attempt', async (t) => {
  const taskQueue = `webhook-fault-${randomUUID()}`;
  const workerEnv = {
    TEMPORAL_TASK_QUEUE: taskQueue,
    WEBHOOK_RETRY_SCHEDULE: '2s,3s,3s,5s,8s,10s,15s,20s',
    WEBHOOK_DISABLE_AFTER: '10m',
  };
  const api = await startApi({ TEMPORAL_TASK_QUEUE: taskQueue });
  const receiver = await startReceiver();
  let worker = startWorker(workerEnv);
  t.teardown(async () => {
    await kill(worker);
    await receiver.close();
    await api.close();
  });

  const ws = await api.workspace('Webhook faults');
  const created = await api.call('POST', '/v1/webhooks', {
    key: ws.keys.live,
    body: { url: receiver.url(), events: ['transfer.created'] },
  });
  t.is(created.status, 201, created.text);
  const { id, secret } = created.body as { id: string; secret: string };
  await receiver.down();
  for (let i = 0; i < 3; i++) await createTransfer(api, ws.keys.live, { files: [{ name: `f${i}.txt`, size: 1 }] });

  const attempts = async () =>
    (await api.call('GET', `/v1/webhooks/${id}/deliveries?limit=100`, { key: ws.keys.live })).body.data as any[];
  const failedFirst = await eventually(async () => {
    const list = await attempts();
    return new Set(list.map((a) => a.event_id)).size === 3 ? list : undefined;
  }, 60_000);
  const eventIds = [...new Set(failedFirst.map((a) => a.event_id as string))];
  t.true(
    failedFirst.every((a) => !a.succeeded),
    'while the receiver is down every attempt fails',
  );

  await kill(worker);
  await restartTemporal();
  await receiver.up();
  worker = startWorker(workerEnv);

  for (const eventId of eventIds) {
    await eventually(async () => (receiver.forEvent(eventId).length > 0 ? true : undefined), 90_000, 500);
  }
  const verifier = new Webhook(secret);
  for (const entry of receiver.received) {
    const headers = Object.fromEntries(Object.entries(entry.headers).map(([k, v]) => [k, String(v)]));
    t.notThrows(() => verifier.verify(entry.body, headers));
  }
  const final = await eventually(async () => {
    const list = await attempts();
    return eventIds.every((e) => list.some((a) => a.event_id === e && a.succeeded)) ? list : undefined;
  });
  for (const eventId of eventIds) {
    const mine = final.filter((a) => a.event_id === eventId);
    const numbers = mine.map((a) => a.attempt).sort((a, b) => a - b);
    t.deepEqual(
      numbers,
      numbers.map((_, i) => i + 1),
      `attempts of ${eventId} are numbered without gap or repeat`,
    );
    t.is(mine.filter((a) => a.succeeded).length, 1, 'one success per delivery: the schedule stopped there');
  }
  const hook = (await api.call('GET', '/v1/webhooks', { key: ws.keys.live })).body.data[0];
  t.is(hook.success_count, 3);
  t.is(hook.failure_count, final.length - 3, 'every failed attempt counted once');
});
