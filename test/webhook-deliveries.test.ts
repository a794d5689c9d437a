import type { Client } from '@temporalio/client';
import test from 'ava';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { createDeliveryQueries } from '../lib/db/queries/deliveries.ts';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { sql } from '../lib/db/sql.ts';
import { startDispatcher } from '../lib/events/dispatcher.ts';
import { planRuleRuns } from '../lib/rules/plan.ts';
import { connectTemporal } from '../lib/temporal.ts';
import { startSender } from '../lib/webhooks/sender.ts';
import { verifyLegacy } from '../lib/webhooks/signature.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { deliveriesSettled, deliveryQueued, eventsDispatched, standInTransferCreated } from './helpers/dispatch.ts';
import { type Received, type Receiver, startReceiver } from './helpers/receiver.ts';
import { untrustedCertificate } from './helpers/tls.ts';
import { createTransfer } from './helpers/transfers.ts';

// Deliveries through the real pipeline: an API call records an event, the
// worker's dispatcher starts a delivery workflow, the activity POSTs to a real
// receiver on loopback. scripts/test.sh gives the worker a short retry
// schedule (WEBHOOK_RETRY_SCHEDULE) and a 2 s timeout.

let api: TestApi;
test.before(async () => {
  api = await startApi();
});
test.after.always(() => api.close());

type Hook = { id: string; secret: string };

async function hook(ws: TestWorkspace, receiver: Receiver, events = ['transfer.created'], path = '/hook') {
  const created = await api.call('POST', '/v1/webhooks', {
    key: ws.keys.live,
    body: { url: receiver.url(path), events },
  });
  if (created.status !== 201) throw new Error(`webhook: ${created.status} ${created.text}`);
  return created.body as Hook;
}

/** Creates a transfer; its `transfer.created` event is what the webhook hears. */
async function transferEvent(ws: TestWorkspace): Promise<string> {
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'a.txt', size: 3 }] });
  const events = await createEventQueries(api.services.db).listByType(
    { workspaceId: ws.workspace_id, environment: 'live' },
    'transfer.created',
  );
  const event = events.find((e) => (e.data.transfer as { id: string }).id === created.transfer.id);
  if (!event) throw new Error('no transfer.created event');
  return event.id;
}

const headersOf = (entry: Received) =>
  Object.fromEntries(Object.entries(entry.headers).map(([name, value]) => [name, String(value)]));

async function attempts(ws: TestWorkspace, webhookId: string, query = '') {
  const response = await api.call('GET', `/v1/webhooks/${webhookId}/deliveries?limit=100${query}`, {
    key: ws.keys.live,
  });
  if (response.status !== 200) throw new Error(`deliveries: ${response.status} ${response.text}`);
  return response.body.data as any[];
}

test('an event reaches its webhook signed in both formats, and the attempt and counters are recorded', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  receiver.answer(() => ({ status: 202, body: '{"thanks":true}' }));
  const ws = await api.workspace('Deliveries');
  const { id, secret } = await hook(ws, receiver);
  const eventId = await transferEvent(ws);

  const [delivery] = await eventually(async () =>
    receiver.forEvent(eventId).length ? receiver.forEvent(eventId) : undefined,
  );
  if (!delivery) throw new Error('unreachable');
  const headers = headersOf(delivery);
  // The reference implementation, not ours, checks the Standard Webhooks signature.
  const verified = new Webhook(secret).verify(delivery.body, headers) as any;
  t.is(verified.id, eventId);
  t.is(verified.type, 'transfer.created');
  t.truthy(Date.parse(verified.timestamp));
  t.is(verified.data.transfer.status, 'scanning');
  t.deepEqual(Object.keys(verified).sort(), ['data', 'id', 'timestamp', 'type']);
  t.is(headers['webhook-id'], eventId);
  await t.notThrowsAsync(verifyLegacy(delivery.body, headers['x-service-signature'], secret, { now: Date.now() }));
  t.is(headers['content-type'], 'application/json');
  // The sending instance's own documentation of what it sends (docs/webhooks.md): the worker's
  // address here, which need not be this test's in-process API's.
  t.regex(headers['user-agent'] ?? '', /^Valise-Webhooks\/1\.0 \(\+http:\/\/127\.0\.0\.1(:\d+)?\/docs\/webhooks\)$/);

  const [attempt] = await eventually(async () => {
    const list = await attempts(ws, id);
    return list.length > 0 ? list : undefined;
  });
  t.like(attempt, {
    object: 'webhook_delivery_attempt',
    event_id: eventId,
    event_type: 'transfer.created',
    attempt: 1,
    trigger: 'scheduled',
    succeeded: true,
    status_code: 202,
    error: null,
    response_body: '{"thanks":true}',
    next_retry_at: null,
  });
  t.true(attempt.duration_ms >= 0);
  const listed = await api.call('GET', '/v1/webhooks', { key: ws.keys.live });
  t.like(listed.body.data[0], { id, success_count: 1, failure_count: 0, last_status: 202 });
  t.truthy(listed.body.data[0].last_triggered_at);
});

test('a webhook hears only what it subscribed to, and `*` hears everything', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  const ws = await api.workspace('Subscriptions');
  const downloads = await hook(ws, receiver, ['transfer.downloaded'], '/downloads');
  await hook(ws, receiver, ['*'], '/all');
  const e2e = await hook(ws, receiver, ['transfer.e2e_created'], '/e2e');
  const eventId = await transferEvent(ws);
  // `*` also hears the workspace's earlier events not yet dispatched when it was created (the subscription
  // is judged at dispatch): this event's delivery is the one awaited.
  await eventually(async () => (receiver.forEvent(eventId).some((r) => r.path === '/all') ? true : undefined));
  // Dispatched: every delivery this event will ever have was queued; the others have none.
  await eventsDispatched(api.services.db, [eventId]);
  for (const unsubscribed of [downloads, e2e]) {
    t.false(await deliveryQueued(api.services.db, eventId, unsubscribed.id), 'no delivery queued');
  }
  t.deepEqual(
    receiver.forEvent(eventId).map((r) => r.path),
    ['/all'],
  );
});

test('a receiver that is down, then back, gets every event; duplicates only ever share a webhook-id', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  const ws = await api.workspace('Down then up');
  const { id, secret } = await hook(ws, receiver);
  await receiver.down();
  const eventIds = [await transferEvent(ws), await transferEvent(ws), await transferEvent(ws)];

  // Each delivery fails at least once while nothing listens (connection refused).
  const failed = await eventually(async () => {
    const list = await attempts(ws, id);
    const failing = eventIds.every((e) => list.some((a) => a.event_id === e && !a.succeeded));
    return failing ? list : undefined;
  });
  const refused = failed.find((a) => !a.succeeded);
  t.is(refused.status_code, null);
  t.regex(refused.error, /^connection_refused/);
  t.truthy(refused.next_retry_at, 'a failed attempt says when the next one is due');

  await receiver.up();
  receiver.answer(() => ({ status: 200 }));
  for (const eventId of eventIds) {
    await eventually(async () => (receiver.forEvent(eventId).length > 0 ? true : undefined), 30_000);
  }
  const webhook = new Webhook(secret);
  for (const entry of receiver.received) {
    const body = webhook.verify(entry.body, headersOf(entry)) as { id: string };
    t.is(entry.headers['webhook-id'], body.id, 'a duplicate carries the webhook-id of its event');
  }
  t.deepEqual([...new Set(receiver.received.map((r) => r.headers['webhook-id']))].sort(), [...eventIds].sort());

  const list = await eventually(async () => {
    const all = await attempts(ws, id);
    return eventIds.every((e) => all.some((a) => a.event_id === e && a.succeeded)) ? all : undefined;
  });
  for (const eventId of eventIds) {
    const numbers = list
      .filter((a) => a.event_id === eventId)
      .map((a) => a.attempt)
      .sort((a, b) => a - b);
    t.deepEqual(
      numbers,
      numbers.map((_, i) => i + 1),
      'attempts are numbered 1..n with no gap or repeat',
    );
    t.true(numbers.length >= 2);
  }
});

test('a first attempt that fails is retried on the schedule, ±20 %, and the log numbers the attempts 1, 2, 3', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  const ws = await api.workspace('Retry schedule');
  const { id } = await hook(ws, receiver);
  // The first two attempts fail; the third gets through.
  receiver.answer(() => ({ status: receiver.received.length <= 2 ? 503 : 200 }));
  const eventId = await transferEvent(ws);
  const list = await eventually(async () => {
    const all = await attempts(ws, id, `&event_id=${eventId}`);
    return all.some((a) => a.succeeded) ? all.reverse() : undefined;
  }, 30_000);
  t.deepEqual(
    list.map((a) => [a.attempt, a.trigger, a.succeeded, a.status_code]),
    [
      [1, 'scheduled', false, 503],
      [2, 'scheduled', false, 503],
      [3, 'scheduled', true, 200],
    ],
  );
  t.is(new Set(list.map((a) => a.delivery_id)).size, 1, 'one delivery');
  t.is(list[2].next_retry_at, null);
  const schedule = api.services.config.webhooks.retryScheduleMs;
  const arrivals = receiver.forEvent(eventId).map((r) => r.at);
  for (const i of [0, 1]) {
    const wait = schedule[i] as number;
    // next_retry_at is the jittered wait after the attempt's own time.
    const planned = Date.parse(list[i].next_retry_at) - Date.parse(list[i].created_at);
    t.true(
      planned >= wait * 0.8 - 50 && planned <= wait * 1.2 + 50,
      `wait ${i + 1} planned ${planned} ms for ${wait} ms`,
    );
    const gap = (arrivals[i + 1] as number) - (arrivals[i] as number);
    t.true(gap >= wait * 0.8, `attempt ${i + 2} came ${gap} ms after attempt ${i + 1}, not before the wait`);
    t.true(
      Date.parse(list[i + 1].created_at) >= Date.parse(list[i].next_retry_at),
      `attempt ${i + 2} was made at or after its next_retry_at`,
    );
  }
  const listed = await api.call('GET', '/v1/webhooks', { key: ws.keys.live });
  t.like(listed.body.data[0], { success_count: 1, failure_count: 2, last_status: 200 });
});

test('non-2xx answers, timeouts and redirects are failures, and redirects are not followed', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  const ws = await api.workspace('Failures');
  const { id } = await hook(ws, receiver);
  const plan: Record<string, () => { status: number; delayMs?: number; headers?: Record<string, string> }> = {
    '/hook': () => ({ status: 302, headers: { location: receiver.url('/elsewhere') } }),
  };
  receiver.answer((request) => plan[request.path]?.() ?? { status: 200 });
  const redirected = await transferEvent(ws);
  const first = await eventually(async () => (await attempts(ws, id)).find((a) => a.event_id === redirected));
  t.false(first.succeeded);
  t.is(first.status_code, 302);
  t.regex(first.error, /^http_status/);
  t.false(
    receiver.received.some((r) => r.path === '/elsewhere'),
    'the Location was never requested',
  );

  plan['/hook'] = () => ({ status: 500, body: 'x'.repeat(5000) });
  const test500 = await api.call('POST', `/v1/webhooks/${id}/test`, { key: ws.keys.live });
  t.is(test500.status, 200, test500.text);
  t.like(test500.body, { succeeded: false, status_code: 500, trigger: 'test', event_type: 'ping' });
  t.is(test500.body.response_body.length, 1024, 'the response excerpt is capped at 1 KiB');

  plan['/hook'] = () => ({ status: 200, delayMs: 8_000 });
  const slow = await api.call('POST', `/v1/webhooks/${id}/test`, { key: ws.keys.live });
  t.like(slow.body, { succeeded: false, status_code: null });
  t.regex(slow.body.error, /^timeout/);
  const { timeoutMs } = api.services.config.webhooks;
  t.true(slow.body.duration_ms >= timeoutMs - 50, `waited for the timeout (${slow.body.duration_ms} ms)`);
  t.true(slow.body.duration_ms < timeoutMs + 2_000, `gave up at the timeout (${slow.body.duration_ms} ms)`);
});

test('the test endpoint sends a signed ping to that webhook only; redelivery repeats an event with its webhook-id', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  const ws = await api.workspace('Ping');
  const { id, secret } = await hook(ws, receiver, ['transfer.downloaded']);
  const ping = await api.call('POST', `/v1/webhooks/${id}/test`, { key: ws.keys.live });
  t.is(ping.status, 200, ping.text);
  t.like(ping.body, { succeeded: true, status_code: 200, attempt: 1, trigger: 'test', event_type: 'ping' });
  const delivered = receiver.forEvent(ping.body.event_id)[0];
  if (!delivered) throw new Error('the ping did not arrive');
  const body = new Webhook(secret).verify(delivered.body, headersOf(delivered)) as any;
  t.deepEqual(body.data.webhook_id, id);
  t.is(body.type, 'ping');

  const again = await api.call('POST', `/v1/webhooks/${id}/deliveries/${ping.body.delivery_id}/retry`, {
    key: ws.keys.live,
  });
  t.is(again.status, 200, again.text);
  t.like(again.body, { attempt: 2, trigger: 'manual', succeeded: true, delivery_id: ping.body.delivery_id });
  const copies = receiver.forEvent(ping.body.event_id);
  t.is(copies.length, 2);
  t.is(copies[0]?.headers['webhook-id'], copies[1]?.headers['webhook-id']);

  const other = await api.workspace('Not yours');
  for (const [method, path] of [
    ['POST', `/v1/webhooks/${id}/test`],
    ['GET', `/v1/webhooks/${id}/deliveries`],
    ['POST', `/v1/webhooks/${id}/deliveries/${ping.body.delivery_id}/retry`],
  ] as const) {
    t.is((await api.call(method, path, { key: other.keys.live })).status, 404, `${method} ${path} (other workspace)`);
    t.is((await api.call(method, path, { key: ws.keys.test })).status, 404, `${method} ${path} (test environment)`);
  }
  const unknown = await api.call('POST', `/v1/webhooks/${id}/deliveries/${crypto.randomUUID()}/retry`, {
    key: ws.keys.live,
  });
  t.is(unknown.status, 404);
  t.is(unknown.body.error.code, 'not_found');
});

test('during a secret rotation each delivery is signed with both secrets', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  const ws = await api.workspace('Rotation');
  const { id, secret: oldSecret } = await hook(ws, receiver);
  const rotated = await api.call('POST', `/v1/webhooks/${id}/rotate-secret`, { key: ws.keys.live });
  const newSecret = rotated.body.secret as string;
  const ping = await api.call('POST', `/v1/webhooks/${id}/test`, { key: ws.keys.live });
  t.is(ping.status, 200, ping.text);
  t.true(ping.body.succeeded, ping.text);
  const delivered = receiver.forEvent(ping.body.event_id)[0];
  if (!delivered) throw new Error(`no delivery: ${ping.text}`);
  t.is(String(delivered.headers['webhook-signature']).split(' ').length, 2);
  t.notThrows(() => new Webhook(oldSecret).verify(delivered.body, headersOf(delivered)));
  t.notThrows(() => new Webhook(newSecret).verify(delivered.body, headersOf(delivered)));
  await t.notThrowsAsync(
    verifyLegacy(delivered.body, delivered.headers['x-service-signature'], newSecret, { now: Date.now() }),
    'legacy: the current secret',
  );
});

test('the delivery log pages with a cursor and filters by event', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  const ws = await api.workspace('Log');
  const { id } = await hook(ws, receiver);
  const pings = [];
  for (let i = 0; i < 3; i++)
    pings.push((await api.call('POST', `/v1/webhooks/${id}/test`, { key: ws.keys.live })).body);
  const first = await api.call('GET', `/v1/webhooks/${id}/deliveries?limit=2`, { key: ws.keys.live });
  t.is(first.body.data.length, 2);
  t.true(first.body.has_more);
  const second = await api.call('GET', `/v1/webhooks/${id}/deliveries?limit=2&cursor=${first.body.next_cursor}`, {
    key: ws.keys.live,
  });
  t.deepEqual(
    [...first.body.data, ...second.body.data].map((a: any) => a.id),
    pings.reverse().map((p) => p.id),
  );
  const byEvent = await api.call('GET', `/v1/webhooks/${id}/deliveries?event_id=${pings[0].event_id}`, {
    key: ws.keys.live,
  });
  t.deepEqual(
    byEvent.body.data.map((a: any) => a.id),
    [pings[0].id],
  );
});

test('a webhook failing for WEBHOOK_DISABLE_AFTER is disabled, with a webhook.disabled event to the others', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  const ws = await api.workspace('Disabled');
  receiver.answer((request) => ({ status: request.path === '/broken' ? 503 : 200 }));
  const broken = await hook(ws, receiver, ['transfer.created'], '/broken');
  await hook(ws, receiver, ['webhook.disabled'], '/watcher');
  await transferEvent(ws);

  const notice = await eventually(async () => receiver.received.find((r) => r.path === '/watcher'), 90_000, 500);
  const body = JSON.parse(notice.body);
  t.is(body.type, 'webhook.disabled');
  t.is(body.data.webhook.id, broken.id);
  t.is(body.data.reason, 'failing');
  const listed = await api.call('GET', '/v1/webhooks', { key: ws.keys.live });
  const off = listed.body.data.find((w: any) => w.id === broken.id);
  t.like(off, { is_active: false, disabled_reason: 'failing', last_status: 503 });
  t.true(off.failure_count >= 2);

  // Disabled: new events are not delivered to it until it is turned back on. Once the event is
  // dispatched, every delivery it will ever have was queued: none for the disabled webhook.
  const later = await transferEvent(ws);
  await eventsDispatched(api.services.db, [later]);
  t.false(await deliveryQueued(api.services.db, later, broken.id), 'no delivery to the disabled webhook');
  t.deepEqual(receiver.forEvent(later), []);
  const enabled = await api.call('PATCH', '/v1/webhooks', {
    key: ws.keys.live,
    body: { id: broken.id, is_active: true },
  });
  t.like(enabled.body, { is_active: true, disabled_reason: null });
});

/** A sender beside the worker's, on the test API's settings. */
function senderBeside(temporal: Client, options: { pollMs?: number } = {}) {
  const config = api.services.config;
  return startSender({
    db: api.services.db,
    databaseUrl: config.database.url,
    temporal,
    taskQueue: config.temporal.taskQueue,
    webhooks: config.webhooks,
    sealKey: api.services.keys.seal,
    log: () => undefined,
    ...options,
  });
}

test('dispatchers and senders racing over the same events deliver each (event, webhook) exactly once', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  const ws = await api.workspace('Racing dispatchers');
  const one = await hook(ws, receiver, ['transfer.created'], '/one');
  const two = await hook(ws, receiver, ['transfer.created'], '/two');
  // Two more dispatchers and senders beside the worker's, all woken by the same NOTIFYs.
  const temporal = await connectTemporal(api.services.config);
  const config = api.services.config;
  const senders = [1, 2].map(() => senderBeside(temporal));
  const rivals = [1, 2].map(() =>
    startDispatcher({
      db: api.services.db,
      databaseUrl: config.database.url,
      temporal,
      taskQueue: config.temporal.taskQueue,
      // They claim other tests' events too: they must plan those events' rule runs as the worker would.
      planRuns: planRuleRuns,
      log: () => undefined,
    }),
  );
  t.teardown(async () => {
    await Promise.all(rivals.map((rival) => rival.stop()));
    await Promise.all(senders.map((sender) => sender.stop()));
    await temporal.connection.close();
  });

  const tenant = { workspaceId: ws.workspace_id, environment: 'live' as const };
  const ids = await api.services.db.transaction(async (tx) => {
    const events = createEventQueries(tx);
    const recorded = [];
    for (let i = 0; i < 60; i++) {
      recorded.push(await events.record(tenant, 'transfer.created', standInTransferCreated()));
    }
    return recorded.map((event) => event.id);
  });
  await eventually(async () => (receiver.received.length >= 120 ? true : undefined), 60_000);
  // Every event dispatched, then every delivery recorded as succeeded: no POST can come after this.
  await eventsDispatched(api.services.db, ids, 60_000);
  await deliveriesSettled(api.services.db, ids);
  t.is(receiver.received.length, 120, 'no (event, webhook) pair was delivered twice');
  for (const path of ['/one', '/two']) {
    const heard = receiver.received.filter((r) => r.path === path).map((r) => r.headers['webhook-id']);
    t.deepEqual([...heard].sort(), [...ids].sort(), `${path} heard each event once`);
  }
  for (const { id } of [one, two]) {
    const recorded = await attempts(ws, id);
    t.is(recorded.length, 60, 'each attempt recorded once');
    t.true(recorded.every((a) => a.attempt === 1 && a.succeeded && a.trigger === 'scheduled'));
  }
});

test('the dispatcher queues deliveries already leased to its own sender, which posts them at once; the rest wake every sender', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  const ws = await api.workspace('Handed over');
  const one = await hook(ws, receiver, ['transfer.created'], '/one');
  await hook(ws, receiver, ['transfer.created'], '/two');
  const config = api.services.config;
  const temporal = await connectTemporal(config);
  // A sender that never polls: what it POSTs came from the hand-over (or a NOTIFY), not from its own lease.
  const sender = senderBeside(temporal, { pollMs: 3_600_000 });
  const listener = new pg.Client({ connectionString: config.database.url });
  await listener.connect();
  await listener.query('LISTEN valise_deliveries');
  const notified: string[] = [];
  listener.on('notification', (message) => notified.push(message.channel));
  t.teardown(async () => {
    await listener.end();
    await sender.stop();
    await temporal.connection.close();
  });

  const tenant = { workspaceId: ws.workspace_id, environment: 'live' as const };
  for (const room of [2, 1]) {
    notified.length = 0;
    // Other tests' NOTIFYs wake this sender too; while its lease statement runs, its room counts as
    // held and a reservation gets less: wait for the room, as a dispatcher would NOTIFY instead.
    const reserved = await eventually(
      async () => {
        const granted = sender.reserve(room);
        if (granted === room) return granted;
        sender.adopt([], granted);
        return undefined;
      },
      20_000,
      10,
    );
    // The event is uncommitted until the transaction ends: no other dispatcher can claim it.
    const { eventId, leased, queued } = await api.services.db.transaction(async (tx) => {
      const event = await createEventQueries(tx).record(tenant, 'transfer.created', standInTransferCreated());
      const leased = await createDeliveryQueries(tx).queueFirstAttempts([event.id], {
        limit: reserved,
        leaseMs: sender.leaseMs,
      });
      // Read before the commit: once it is visible, another sender may lease what is left.
      const queued = await tx.any(sql.type(z.object({ leased: z.boolean(), dispatched: z.boolean() }))`
        SELECT d.leased_until IS NOT NULL AS leased, e.dispatched_at IS NOT NULL AS dispatched
        FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.event_id = ${event.id}`);
      return { eventId: event.id, leased, queued };
    });
    sender.adopt(leased, reserved);
    t.is(leased.length, room, `room for ${room}: ${room} leased`);
    t.deepEqual(
      leased.map((delivery) => [delivery.event.id, delivery.status, delivery.attempted]),
      Array(room).fill([eventId, 'pending', false]),
    );
    t.is(queued.length, 2, 'one delivery per subscribed webhook');
    t.true(queued.every((row) => row.dispatched));
    t.is(queued.filter((row) => row.leased).length, room);
    // Both arrive, once each: the leased ones from the hand-over, the other after the NOTIFY.
    await eventually(async () => (receiver.forEvent(eventId).length === 2 ? true : undefined), 15_000, 50);
    await deliveriesSettled(api.services.db, [eventId]);
    t.is(receiver.forEvent(eventId).length, 2);
    // (Other tests' dispatchers notify too, so only the NOTIFY that must come is checked.)
    if (room === 1) t.true(notified.length > 0, 'what no sender holds wakes every sender');
  }
  t.true((await attempts(ws, one.id)).every((attempt) => attempt.attempt === 1 && attempt.succeeded));
});

test('HTTPS: the name resolves through WEBHOOK_HOSTS alone, the socket goes to that address, the certificate is checked', async (t) => {
  const receiver = await startReceiver({ tls: true });
  t.teardown(receiver.close);
  const ws = await api.workspace('Named hosts');
  const { id, secret } = await hook(ws, receiver, ['transfer.created'], '/secure');
  const eventId = await transferEvent(ws);
  const delivered = await eventually(async () => receiver.forEvent(eventId)[0]);
  t.is(delivered.headers.host, `hooks.valise.test:${receiver.port}`, 'Host (and SNI) keep the name');
  t.notThrows(() => new Webhook(secret).verify(delivered.body, headersOf(delivered)));
  // The worker records the attempt once the receiver has answered: it may land just after.
  const recorded = await eventually(async () => (await attempts(ws, id))[0]);
  t.like(recorded, { succeeded: true, url: receiver.url('/secure') });

  // The certificate is checked: the same name served with a certificate nobody trusts fails, and nothing is sent.
  const impostor = await startReceiver({ tls: true, certificate: await untrustedCertificate() });
  t.teardown(impostor.close);
  const spoofed = await hook(ws, impostor, ['transfer.created'], '/impostor');
  const refused = await api.call('POST', `/v1/webhooks/${spoofed.id}/test`, { key: ws.keys.live });
  t.is(refused.status, 200, refused.text);
  t.like(refused.body, { succeeded: false, status_code: null });
  t.regex(refused.body.error, /^tls_error: .*self[- ]signed certificate/i);
  t.deepEqual(impostor.received, [], 'no request reached the untrusted receiver');

  // Plain http is for loopback only: a name is not known to be loopback until it is resolved.
  const plain = await api.call('POST', '/v1/webhooks', {
    key: ws.keys.live,
    body: { url: `http://hooks.valise.test:${receiver.port}/plain` },
  });
  t.is(plain.status, 400, plain.text);
  t.is(plain.body.error.param, 'url');

  // Any other name fails to resolve without a lookup ever leaving the machine.
  const elsewhere = await api.call('POST', '/v1/webhooks', {
    key: ws.keys.live,
    body: { url: 'https://hooks.example.com/never', events: ['transfer.created'] },
  });
  const ping = await api.call('POST', `/v1/webhooks/${elsewhere.body.id}/test`, { key: ws.keys.live });
  t.like(ping.body, { succeeded: false, status_code: null });
  t.regex(ping.body.error, /^target_refused: .*hooks\.example\.com/);
});
