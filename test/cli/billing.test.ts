import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import test from 'ava';
import Stripe from 'stripe';
import { startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';
import { cli } from './cli-harness.ts';

// `valise billing subscription|invoices|events` against the real API, after a processor event
// signed by the processor's own library.

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
let api: TestApi;
let ws: TestWorkspace;
let home: string | undefined;
test.before(async () => {
  api = await startApi({ BILLING_WEBHOOK_SECRET: SECRET });
  ws = await api.workspace('CLI billing');
});
test.after.always(async () => {
  await api.close();
  if (home) await rm(home, { recursive: true, force: true });
});

test('billing subscription, invoices and events show what the processor reported', async (t) => {
  const seconds = Math.floor(Date.now() / 1000);
  // Unique per run: the test database outlives it, and a customer belongs to one workspace.
  const customer = `cus_cli${randomBytes(6).toString('hex')}`;
  const invoiceId = `in_cli${randomBytes(6).toString('hex')}`;
  const payload = JSON.stringify({
    id: `evt_cli${randomBytes(6).toString('hex')}`,
    type: 'invoice.paid',
    created: seconds,
    data: {
      object: {
        id: invoiceId,
        customer,
        number: 'CLI-1',
        status: 'paid',
        amount_due: 2500,
        amount_paid: 2500,
        currency: 'eur',
        created: seconds,
        metadata: { workspace_id: ws.workspace_id },
      },
    },
  });
  const header = new Stripe('sk_test_valise').webhooks.generateTestHeaderString({ payload, secret: SECRET });
  const delivered = await api.call('POST', '/v1/billing/processor/stripe', {
    rawBody: payload,
    headers: { 'content-type': 'application/json', 'stripe-signature': header },
  });
  t.is(delivered.status, 200, delivered.text);

  const valise = await cli(api.url, ws.keys.live);
  home = valise.home;
  const subscription = await valise.run(['billing', 'subscription']);
  t.is(subscription.code, 0, subscription.stderr);
  t.regex(subscription.stdout, new RegExp(`Customer:\\s+${customer}`));
  const invoices = await valise.run(['billing', 'invoices']);
  t.regex(invoices.stdout, new RegExp(`${invoiceId}.*CLI-1.*paid.*25\\.00 EUR`));
  const events = await valise.json(['billing', 'events', '--type', 'invoice.paid', '--raw']);
  t.is(events.data.length, 1);
  t.is(events.data[0].raw.type, 'invoice.paid');
  t.true(events.filter.include_raw);
  const bad = await valise.run(['billing', 'events', '--limit', 'many']);
  t.is(bad.code, 1);
});
