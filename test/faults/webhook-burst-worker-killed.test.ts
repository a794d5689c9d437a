import { randomUUID } from 'node:crypto';
import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { createEventQueries } from '../../lib/db/queries/events.ts';
import { sql } from '../../lib/db/sql.ts';
import { SENDER_HOLD } from '../../lib/webhooks/sender.ts';
import { eventually, startApi } from '../helpers/api.ts';
import { deliveriesSettled, standInTransferCreated } from '../helpers/dispatch.ts';
import { kill, startWorker } from '../helpers/processes.ts';
import { startReceiver } from '../helpers/receiver.ts';

// A burst of 500 events × 3 webhooks; the worker is killed (SIGKILL) while
// its sender is in the middle of it, and another worker is started. Every
// (event, webhook) pair arrives, signed; a pair arrives twice only if the dead
// worker held its lease at the kill (docs/webhooks.md, "Delivery"), so never
// more than SENDER_HOLD of them; and every attempt is recorded once.

const EVENTS = 500;
const PATHS = ['/a', '/b', '/c'];
const KILL_AFTER = 300;

test('a worker killed mid-burst loses no delivery, and repeats only what it held at the kill', async (t) => {
  const taskQueue = `webhook-burst-${randomUUID()}`;
  // A 2 s timeout makes the sender's lease 23 s (senderLeaseMs), so the second worker takes the dead one's deliveries soon.
  const workerEnv = { TEMPORAL_TASK_QUEUE: taskQueue, WEBHOOK_TIMEOUT_MS: '2000' };
  const api = await startApi({ TEMPORAL_TASK_QUEUE: taskQueue });
  const receiver = await startReceiver();
  let worker = startWorker(workerEnv);
  t.teardown(async () => {
    await kill(worker);
    await receiver.close();
    await api.close();
  });

  const ws = await api.workspace('Burst kill');
  const hooks = new Map<string, string>();
  for (const path of PATHS) {
    const created = await api.call('POST', '/v1/webhooks', {
      key: ws.keys.live,
      body: { url: receiver.url(path), events: ['transfer.created'] },
    });
    t.is(created.status, 201, created.text);
    hooks.set(path, created.body.secret as string);
  }
  // Slow enough answers that the sender has its deliveries in flight when the kill comes.
  let reachedKillPoint: () => void = () => undefined;
  const killPoint = new Promise<void>((resolve) => (reachedKillPoint = resolve));
  receiver.answer(() => {
    if (receiver.received.length >= KILL_AFTER) reachedKillPoint();
    return { status: 204, delayMs: 20 };
  });

  const tenant = { workspaceId: ws.workspace_id, environment: 'live' as const };
  const eventIds = await api.services.db.transaction(async (tx) => {
    const events = createEventQueries(tx);
    const ids: string[] = [];
    for (let i = 0; i < EVENTS; i++)
      ids.push((await events.record(tenant, 'transfer.created', standInTransferCreated())).id);
    return ids;
  });

  await killPoint;
  await kill(worker);
  const arrivedBeforeKill = receiver.received.length;
  // What the dead worker held: leased, and not yet recorded and off the queue.
  const held = await api.services.db.any(sql.type(z.object({ event_id: z.string(), path: z.string() }))`
    SELECT d.event_id, w.url AS path FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.event_id = ANY (${sql.array(eventIds, 'text')})
      AND d.sender_due_at IS NOT NULL AND d.leased_until > now()`);
  const heldPairs = new Set(held.map((row) => `${row.event_id} ${new URL(row.path).pathname}`));
  t.true(arrivedBeforeKill < EVENTS * PATHS.length, `killed mid-burst (${arrivedBeforeKill} had arrived)`);
  t.true(heldPairs.size > 0, 'the dead worker held deliveries at the kill');
  t.true(heldPairs.size <= SENDER_HOLD, `it held at most ${SENDER_HOLD} (held ${heldPairs.size})`);

  worker = startWorker(workerEnv);
  // Only this burst's pairs count: the test database's outbox is shared, and a leftover delivery
  // of an earlier test could reach a receiver that now listens on its old port.
  const ours = new Set(eventIds);
  const ourArrivals = () => receiver.received.filter((r) => ours.has(String(r.headers['webhook-id'])));
  const arrivedPairs = () => new Set(ourArrivals().map((r) => `${r.headers['webhook-id']} ${r.path}`));
  await eventually(
    async () => {
      if (worker.exitCode !== null) throw new Error(`the second worker exited:\n${worker.lastOutput()}`);
      return arrivedPairs().size === EVENTS * PATHS.length ? true : undefined;
    },
    120_000,
    250,
  ).catch(async (error: Error) => {
    // Enough to tell a stuck queue from a dead worker or a slow machine.
    const states = await api.services.db.any(sql.type(z.object({ state: z.string(), count: z.coerce.number() }))`
      SELECT concat_ws(' ', status, CASE WHEN sender_due_at IS NULL THEN 'off the queue' ELSE 'queued' END,
        CASE WHEN leased_until > now() THEN 'leased' END) AS state, count(*) AS count
      FROM webhook_deliveries WHERE event_id = ANY (${sql.array(eventIds, 'text')}) GROUP BY 1`);
    const others = await api.services.db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
      SELECT count(*) AS count FROM webhook_deliveries
      WHERE sender_due_at IS NOT NULL AND NOT event_id = ANY (${sql.array(eventIds, 'text')})`);
    throw new Error(
      `${error.message}: ${arrivedPairs().size} of ${EVENTS * PATHS.length} pairs arrived; deliveries: ` +
        `${states.map((row) => `${row.count} ${row.state}`).join(', ')}; ${others} other tests' deliveries queued; ` +
        `the worker's last output:\n${worker.lastOutput()}`,
    );
  });
  await deliveriesSettled(api.services.db, eventIds, 60_000);

  const seen = new Map<string, number>();
  for (const entry of ourArrivals()) {
    const headers = Object.fromEntries(Object.entries(entry.headers).map(([k, v]) => [k, String(v)]));
    const body = new Webhook(hooks.get(entry.path) ?? '').verify(entry.body, headers) as { id: string };
    const pair = `${body.id} ${entry.path}`;
    seen.set(pair, (seen.get(pair) ?? 0) + 1);
  }
  t.is(seen.size, EVENTS * PATHS.length, 'every (event, webhook) pair arrived, with a valid signature');
  const twice = [...seen].filter(([, count]) => count > 1).map(([pair]) => pair);
  t.deepEqual(
    twice.filter((pair) => !heldPairs.has(pair)),
    [],
    'a pair arrived twice only if the dead worker held it at the kill',
  );
  t.true(
    [...seen.values()].every((count) => count <= 2),
    'no pair arrived more than twice',
  );
  t.log(`${arrivedBeforeKill} arrived before the kill, ${heldPairs.size} held, ${twice.length} sent twice`);

  const attempts = await api.services.db.any(sql.type(z.object({ attempts: z.coerce.number(), status: z.string() }))`
    SELECT count(a.id) AS attempts, d.status FROM webhook_deliveries d
    LEFT JOIN webhook_delivery_attempts a ON a.delivery_id = d.id
    WHERE d.event_id = ANY (${sql.array(eventIds, 'text')})
    GROUP BY d.id, d.status`);
  t.is(attempts.length, EVENTS * PATHS.length);
  t.true(
    attempts.every((row) => row.attempts === 1 && row.status === 'succeeded'),
    'each delivery has one recorded attempt, and succeeded',
  );
});
