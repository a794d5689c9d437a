import { randomBytes } from 'node:crypto';
import test from 'ava';
import Stripe from 'stripe';
import { linkCustomer } from '../lib/billing/service.ts';
import { DEV_BILLING_WEBHOOK_SECRET, loadConfig } from '../lib/config.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { type Receiver, startReceiver } from './helpers/receiver.ts';
import { createTransfer, put } from './helpers/transfers.ts';

// The payment processor's receiver and the billing routes (docs/billing.md), with deliveries signed
// by the processor's own library, as Stripe signs them.

const NEW_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const OLD_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const stripe = new Stripe('sk_test_valise_not_a_key');
const RECEIVER = '/v1/billing/processor/stripe';

let api: TestApi;
let receiver: Receiver;
test.before(async () => {
  // Mid-rotation: both the new and the old endpoint secret verify.
  api = await startApi({ BILLING_WEBHOOK_SECRET: `${NEW_SECRET},${OLD_SECRET}` });
  receiver = await startReceiver();
});
test.after.always(async () => {
  await receiver?.close();
  await api?.close();
});

const now = () => Math.floor(Date.now() / 1000);
const unique = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;

type Delivery = { payload: string; header: string };
function sign(event: object, options: { secret?: string; timestamp?: number } = {}): Delivery {
  const payload = JSON.stringify(event);
  const header = stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? NEW_SECRET,
    timestamp: options.timestamp ?? now(),
  });
  return { payload, header };
}

const deliver = ({ payload, header }: Delivery) =>
  api.call('POST', RECEIVER, {
    rawBody: payload,
    headers: { 'content-type': 'application/json', 'stripe-signature': header },
  });

function processorEvent(type: string, object: Record<string, unknown>) {
  return { id: unique('evt'), object: 'event', type, created: now(), livemode: false, data: { object } };
}

function subscriptionObject(customer: string, changes: Record<string, unknown> = {}) {
  return {
    id: 'sub_valise_1',
    object: 'subscription',
    customer,
    status: 'active',
    cancel_at_period_end: false,
    items: {
      data: [
        {
          price: { id: 'price_team', lookup_key: 'team' },
          current_period_start: now() - 86_400,
          current_period_end: now() + 29 * 86_400,
        },
      ],
    },
    metadata: {},
    ...changes,
  };
}

function invoiceObject(customer: string, changes: Record<string, unknown> = {}) {
  return {
    id: unique('in'),
    object: 'invoice',
    customer,
    number: 'VAL-0001',
    status: 'open',
    amount_due: 4900,
    amount_paid: 0,
    currency: 'eur',
    period_start: now() - 86_400,
    period_end: now(),
    hosted_invoice_url: 'https://invoice.stripe.com/i/acct_x/test_y',
    created: now(),
    customer_email: 'billing@example.com',
    ...changes,
  };
}

async function linkedWorkspace(name: string): Promise<{ ws: TestWorkspace; customer: string }> {
  const ws = await api.workspace(name);
  const customer = unique('cus');
  await linkCustomer(api.services, ws.workspace_id, customer);
  return { ws, customer };
}

const listEvents = (key: string, query = '') => api.call('GET', `/v1/billing/processor-events${query}`, { key });

test('a signed event is recorded and applied; its redelivery is acknowledged and changes nothing', async (t) => {
  const { ws, customer } = await linkedWorkspace('Billing: applied');
  const event = processorEvent('customer.subscription.updated', subscriptionObject(customer));
  const first = await deliver(sign(event));
  t.is(first.status, 200, first.text);
  t.is(first.body.outcome, 'recorded');

  const subscription = await api.call('GET', '/v1/billing/subscription', { key: ws.keys.live });
  t.is(subscription.status, 200, subscription.text);
  t.like(subscription.body, {
    plan: 'team',
    status: 'active',
    customer_id: customer,
    subscription_id: 'sub_valise_1',
    cancel_at_period_end: false,
  });

  // The processor retries the same event, signed anew: acknowledged, nothing recorded or changed.
  const again = await deliver(
    sign({ ...event, data: { object: subscriptionObject(customer, { status: 'past_due' }) } }),
  );
  t.is(again.status, 200, again.text);
  t.is(again.body.outcome, 'duplicate');
  const after = await api.call('GET', '/v1/billing/subscription', { key: ws.keys.live });
  t.is(after.body.status, 'active');
  const listed = await listEvents(ws.keys.live);
  t.is(listed.body.data.filter((e: any) => e.processor_event_id === event.id).length, 1);
});

test('a bad signature, a stale or future timestamp and a missing header are refused and recorded nowhere', async (t) => {
  const { ws, customer } = await linkedWorkspace('Billing: refused');
  const cases: Array<[string, Delivery]> = [];
  const forged = processorEvent('invoice.paid', invoiceObject(customer, { status: 'paid', amount_paid: 4900 }));
  cases.push(['unknown secret', sign(forged, { secret: `whsec_${randomBytes(24).toString('base64')}` })]);
  const tampered = sign(forged);
  cases.push(['body changed after signing', { ...tampered, payload: tampered.payload.replace('4900', '1') }]);
  cases.push(['6 minutes old', sign(forged, { timestamp: now() - 360 })]);
  cases.push(['6 minutes ahead', sign(forged, { timestamp: now() + 360 })]);
  cases.push(['no v1', { payload: JSON.stringify(forged), header: `t=${now()}` }]);
  for (const [name, delivery] of cases) {
    const refused = await deliver(delivery);
    t.is(refused.status, 400, `${name}: ${refused.text}`);
    t.is(refused.body.error.code, 'validation_error', name);
    t.is(refused.body.error.param, 'Stripe-Signature', name);
  }
  const missing = await api.call('POST', RECEIVER, { body: forged });
  t.is(missing.status, 400);
  t.is(missing.body.error.param, 'Stripe-Signature');

  const listed = await listEvents(ws.keys.live);
  t.deepEqual(listed.body.data, [], 'nothing recorded');
  const invoices = await api.call('GET', '/v1/billing/invoices', { key: ws.keys.live });
  t.deepEqual(invoices.body.data, [], 'nothing applied');
});

test('during a rotation either configured secret verifies, and a header with old and new v1 values is accepted', async (t) => {
  const { ws, customer } = await linkedWorkspace('Billing: rotation');
  const byOld = await deliver(sign(processorEvent('customer.updated', { id: customer }), { secret: OLD_SECRET }));
  t.is(byOld.status, 200, byOld.text);
  t.is(byOld.body.outcome, 'recorded');

  // As the processor signs while its endpoint secret rolls: one t, a v1 per secret.
  const event = processorEvent('customer.updated', { id: customer });
  const timestamp = now();
  const payload = JSON.stringify(event);
  const unknown = `whsec_${randomBytes(24).toString('base64')}`;
  for (const [older, newer] of [
    [unknown, NEW_SECRET],
    [OLD_SECRET, unknown],
  ] as const) {
    const first = stripe.webhooks.generateTestHeaderString({ payload, secret: older, timestamp });
    const second = stripe.webhooks.generateTestHeaderString({ payload, secret: newer, timestamp });
    const header = `${first},v1=${second.split('v1=')[1]}`;
    const accepted = await deliver({ payload, header });
    t.is(accepted.status, 200, accepted.text);
  }
  const listed = await listEvents(ws.keys.live, '?event_type=customer.updated');
  t.is(listed.body.data.length, 2);
});

test('invoice events appear in GET /v1/billing/invoices and billing.* events reach the workspace webhooks', async (t) => {
  const { ws, customer } = await linkedWorkspace('Billing: invoices');
  const hook = await api.call('POST', '/v1/webhooks', {
    key: ws.keys.live,
    body: {
      url: receiver.url(`/${ws.workspace_id}`),
      events: ['billing.invoice_paid', 'billing.invoice_updated', 'billing.subscription_updated'],
    },
  });
  t.is(hook.status, 201, hook.text);

  const draft = invoiceObject(customer);
  t.is((await deliver(sign(processorEvent('invoice.finalized', draft)))).status, 200);
  const paid = { ...draft, status: 'paid', amount_paid: 4900, status_transitions: { paid_at: now() } };
  const paidEvent = { ...processorEvent('invoice.paid', paid), created: now() + 1 };
  t.is((await deliver(sign(paidEvent))).status, 200);
  // An older event delivered late changes nothing.
  const late = { ...processorEvent('invoice.updated', draft), created: now() - 60 };
  t.is((await deliver(sign(late))).body.outcome, 'recorded');

  const invoices = await api.call('GET', '/v1/billing/invoices', { key: ws.keys.test });
  t.is(invoices.status, 200, invoices.text);
  t.is(invoices.body.object, 'list');
  t.is(invoices.body.data.length, 1);
  t.like(invoices.body.data[0], {
    object: 'invoice',
    id: draft.id,
    number: 'VAL-0001',
    status: 'paid',
    amount_due: 4900,
    amount_paid: 4900,
    currency: 'eur',
    hosted_invoice_url: draft.hosted_invoice_url,
  });

  t.is(
    (await deliver(sign(processorEvent('customer.subscription.created', subscriptionObject(customer))))).status,
    200,
  );
  const delivered = await eventually(async () => {
    const types = receiver.received
      .filter((r) => r.path === `/${ws.workspace_id}`)
      .map((r) => JSON.parse(r.body) as { type: string; data: any });
    return types.length >= 3 ? types : undefined;
  }, 30_000);
  t.deepEqual(delivered.map((e) => e.type).sort(), [
    'billing.invoice_paid',
    'billing.invoice_updated',
    'billing.subscription_updated',
  ]);
  const paidDelivery = delivered.find((e) => e.type === 'billing.invoice_paid');
  t.like(paidDelivery?.data.invoice, { id: draft.id, amount: 4900, currency: 'eur', status: 'paid' });
});

test("an event names its workspace by metadata.workspace_id; an unknown customer's is acknowledged and kept nowhere", async (t) => {
  const ws = await api.workspace('Billing: metadata');
  const customer = unique('cus');
  const unlinked = await deliver(sign(processorEvent('customer.subscription.created', subscriptionObject(customer))));
  t.is(unlinked.status, 200, unlinked.text);
  t.is(unlinked.body.outcome, 'unlinked');
  t.deepEqual((await listEvents(ws.keys.live)).body.data, []);

  const object = subscriptionObject(customer, { metadata: { workspace_id: ws.workspace_id, plan: 'business' } });
  const linked = await deliver(sign(processorEvent('customer.subscription.created', object)));
  t.is(linked.body.outcome, 'recorded');
  const subscription = await api.call('GET', '/v1/billing/subscription', { key: ws.keys.live });
  t.like(subscription.body, { plan: 'business', customer_id: customer });
});

test('usage counts the live environment only', async (t) => {
  const ws = await api.workspace('Billing: usage');
  const empty = await api.call('GET', '/v1/billing/subscription', { key: ws.keys.live });
  t.like(empty.body, { plan: 'free', status: 'none', customer_id: null, subscription_id: null });
  t.like(empty.body.usage, { bytes_stored: 0, bytes_sent: 0, transfers: 0 });

  const live = await createTransfer(api, ws.keys.live, { files: [{ name: 'live.bin', size: 1000 }] });
  const upload = live.upload_urls[0];
  t.truthy(upload);
  t.is((await put(upload?.url ?? '', randomBytes(1000))).status < 300, true);
  const other = await createTransfer(api, ws.keys.test, { files: [{ name: 'test.bin', size: 500 }] });
  await put(other.upload_urls[0]?.url ?? '', randomBytes(500));

  const usage = await api.call('GET', '/v1/billing/subscription', { key: ws.keys.test });
  t.like(usage.body.usage, { bytes_stored: 1000, transfers: 1, bytes_sent: 0 });
  const from = Date.parse(usage.body.usage.period_start);
  t.true(from <= Date.now() && Date.now() < Date.parse(usage.body.usage.period_end));
});

test('GET /v1/billing/processor-events: clamp, filters, raw, counts, note, filter echo', async (t) => {
  const { ws, customer } = await linkedWorkspace('Billing: listing');
  for (const type of ['customer.updated', 'customer.updated', 'customer.updated', 'payment_intent.created']) {
    const response = await deliver(sign(processorEvent(type, { id: unique('pi'), customer })));
    t.is(response.status, 200, response.text);
  }
  const all = await listEvents(ws.keys.live);
  t.is(all.status, 200, all.text);
  t.is(all.body.object, 'list');
  t.is(all.body.limit, 50);
  t.is(all.body.data.length, 4);
  t.deepEqual(all.body.filter, { event_type: null, since: null, include_raw: false, limit: 50 });
  t.deepEqual(all.body.counts_by_type, [
    { event_type: 'customer.updated', count: 3 },
    { event_type: 'payment_intent.created', count: 1 },
  ]);
  t.is(typeof all.body.note, 'string');
  const processed = all.body.data.map((e: any) => Date.parse(e.processed_at));
  t.deepEqual(
    processed,
    [...processed].sort((a: number, b: number) => b - a),
    'newest first',
  );
  for (const item of all.body.data) {
    t.deepEqual(Object.keys(item).sort(), [
      'customer_id',
      'event_type',
      'id',
      'processed_at',
      'processor_event_id',
      'subscription_id',
    ]);
  }

  t.is((await listEvents(ws.keys.live, '?limit=0')).body.limit, 1);
  t.is((await listEvents(ws.keys.live, '?limit=0')).body.data.length, 1);
  t.true((await listEvents(ws.keys.live, '?limit=0')).body.has_more);
  t.is((await listEvents(ws.keys.live, '?limit=1000')).body.limit, 200);
  t.is((await listEvents(ws.keys.live, '?limit=abc')).body.error.code, 'validation_error');

  const typed = await listEvents(ws.keys.live, '?event_type=payment_intent.created');
  t.is(typed.body.data.length, 1);
  t.is(typed.body.filter.event_type, 'payment_intent.created');
  t.is((await listEvents(ws.keys.live, '?event_type=customer')).body.data.length, 0, 'exact match only');

  // `since` is inclusive: the oldest event's own processed_at keeps it.
  const oldest = all.body.data.at(-1).processed_at;
  const since = await listEvents(ws.keys.live, `?since=${encodeURIComponent(oldest)}`);
  t.is(since.body.data.length, 4);
  t.is(since.body.filter.since, oldest);
  const after = new Date(Date.parse(oldest) + 1).toISOString();
  t.is((await listEvents(ws.keys.live, `?since=${encodeURIComponent(after)}`)).body.data.length, 3);
  t.is((await listEvents(ws.keys.live, '?since=yesterday')).status, 400);

  const raw = await listEvents(ws.keys.live, '?include_raw=true');
  t.is(raw.body.note, null);
  t.true(raw.body.filter.include_raw);
  t.is(raw.body.data[0].raw.object, 'event');
  t.is(raw.body.data[0].raw.id, raw.body.data[0].processor_event_id);
  for (const value of ['1', 'TRUE', 'yes', 'false']) {
    const off = await listEvents(ws.keys.live, `?include_raw=${value}`);
    t.is(off.status, 200, value);
    t.false(off.body.filter.include_raw, value);
    t.false('raw' in off.body.data[0], value);
    t.is(typeof off.body.note, 'string', value);
  }
});

test('processor events: the caller workspace only, billing:read, and the key allow-list', async (t) => {
  const { ws, customer } = await linkedWorkspace('Billing: isolation');
  await deliver(sign(processorEvent('customer.updated', { id: customer })));
  const other = await api.workspace('Billing: other');
  t.deepEqual((await listEvents(other.keys.live)).body.data, []);
  t.is((await listEvents(ws.keys.test)).body.data.length, 1, "billing is the workspace's, whatever the environment");

  const narrow = await ws.mintKey({ name: 'no billing', key_type: 'restricted', scopes: ['transfers:read'] });
  const refused = await listEvents(narrow.key);
  t.is(refused.status, 403);
  t.is(refused.body.error.code, 'scope_missing');

  const elsewhere = await ws.mintKey({
    name: 'elsewhere',
    key_type: 'restricted',
    scopes: ['billing:read'],
    allowed_ips: ['203.0.113.7'],
  });
  const outside = await listEvents(elsewhere.key);
  t.is(outside.status, 403);
  t.is(outside.body.error.code, 'ip_not_allowed');
  const allowed = await ws.mintKey({
    name: 'here',
    key_type: 'restricted',
    scopes: ['billing:read'],
    allowed_ips: ['127.0.0.1'],
  });
  t.is((await listEvents(allowed.key)).body.data.length, 1);
});

test('BILLING_WEBHOOK_SECRET: a comma-separated list; the published dev value is refused in production', (t) => {
  const base = {
    VALISE_SECRET: randomBytes(48).toString('base64'),
    MASTER_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    S3_SECRET_ACCESS_KEY: randomBytes(24).toString('base64url'),
  };
  const load = (env: Record<string, string>) => loadConfig({ ...base, ...env });
  t.deepEqual(load({ BILLING_WEBHOOK_SECRET: ` ${NEW_SECRET} , ${OLD_SECRET}` }).billing.webhookSecrets, [
    NEW_SECRET,
    OLD_SECRET,
  ]);
  t.deepEqual(load({}).billing.webhookSecrets, [], 'unset: every delivery is refused');
  t.deepEqual(
    load({ NODE_ENV: 'development', BILLING_WEBHOOK_SECRET: DEV_BILLING_WEBHOOK_SECRET }).billing.webhookSecrets,
    [DEV_BILLING_WEBHOOK_SECRET],
  );
  t.throws(() => load({ NODE_ENV: 'production', BILLING_WEBHOOK_SECRET: DEV_BILLING_WEBHOOK_SECRET }), {
    message: /BILLING_WEBHOOK_SECRET: is the dev stack's published value, refused in production/,
  });
  t.throws(() => load({ BILLING_WEBHOOK_SECRET: 'short' }), { message: /BILLING_WEBHOOK_SECRET/ });
});
