import test from 'ava';
import type { Lookup } from '../lib/net/ssrf.ts';
import { postJson, RESPONSE_EXCERPT_BYTES } from '../lib/webhooks/post.ts';
import { startReceiver } from './helpers/receiver.ts';
import { untrustedCertificate } from './helpers/tls.ts';

// The one outbound POST of deliveries and rule actions, checked at the moment
// it is made. Refusals are proved with an injected resolver: nothing here ever
// connects anywhere but loopback.

const resolvingTo =
  (address: string): Lookup =>
  async () => [{ address, family: address.includes(':') ? 6 : 4 }];

const base = {
  body: '{}',
  headers: { 'content-type': 'application/json' },
  timeoutMs: 3_000,
  userAgent: 'Valise-Webhooks/1.0 (+http://127.0.0.1/docs/webhooks)',
};

test('a name resolving to a private, link-local or metadata address is refused before any connection', async (t) => {
  for (const [address, allowPrivate, pattern] of [
    ['10.1.2.3', false, /not a public address \(private\)/],
    ['169.254.10.10', false, /link_local/],
    ['169.254.169.254', true, /metadata endpoint/],
    ['::ffff:127.0.0.1', false, /loopback/],
  ] as const) {
    const result = await postJson({
      ...base,
      url: 'https://hooks.customer.example/x',
      allowPrivate,
      lookup: resolvingTo(address),
    });
    t.false(result.ok);
    t.is(result.statusCode, null);
    t.regex(result.error ?? '', /^target_refused: /);
    t.regex(result.error ?? '', pattern, address);
  }
});

test('WEBHOOK_HOSTS: unknown names fail without a lookup, and only loopback is reachable', async (t) => {
  const hosts = new Map([
    ['hooks.valise.test', '127.0.0.1'],
    ['public.valise.test', '93.184.216.34'],
  ]);
  const unknown = await postJson({ ...base, url: 'https://elsewhere.example/x', allowPrivate: true, hosts });
  t.regex(unknown.error ?? '', /^target_refused: Could not resolve elsewhere\.example/);
  const publicAddress = await postJson({ ...base, url: 'https://public.valise.test/x', allowPrivate: true, hosts });
  t.regex(publicAddress.error ?? '', /^target_refused: 93\.184\.216\.34 is not a loopback address/);
  const literal = await postJson({ ...base, url: 'https://93.184.216.34/x', allowPrivate: true, hosts });
  t.regex(literal.error ?? '', /^target_refused: /);
});

test('the answer is read: status, a capped excerpt, no NUL; the name is kept for Host', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  receiver.answer(() => ({ status: 201, body: `ok\u0000${'é'.repeat(2000)}` }));
  const result = await postJson({
    ...base,
    url: `http://localhost:${receiver.port}/named`,
    allowPrivate: true,
    lookup: resolvingTo('127.0.0.1'),
  });
  t.true(result.ok);
  t.is(result.statusCode, 201);
  t.false(result.responseBody?.includes('\u0000'));
  t.true(
    Buffer.byteLength(result.responseBody ?? '') <= RESPONSE_EXCERPT_BYTES + 3,
    'at most 1 KiB, cut mid-character',
  );
  t.is(receiver.received[0]?.headers.host, `localhost:${receiver.port}`);
});

test('a receiver that never answers is cut off at the timeout', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  receiver.answer(() => ({ status: 200, delayMs: 5_000 }));
  const result = await postJson({ ...base, timeoutMs: 500, url: receiver.url(), allowPrivate: true });
  t.false(result.ok);
  t.regex(result.error ?? '', /^timeout: no complete answer within 500 ms/);
  t.true(result.durationMs >= 500 && result.durationMs < 2_000, `${result.durationMs} ms`);
});

test('a name that never resolves is cut off at the same timeout, the lookup counting against it', async (t) => {
  const result = await postJson({
    ...base,
    timeoutMs: 500,
    url: 'https://hooks.customer.example/x',
    allowPrivate: false,
    lookup: () => new Promise(() => undefined),
  });
  t.false(result.ok);
  t.is(result.statusCode, null);
  t.regex(result.error ?? '', /^timeout: no complete answer within 500 ms/);
  t.true(result.durationMs >= 500 && result.durationMs < 2_000, `${result.durationMs} ms`);
});

test('HTTPS: an untrusted certificate fails before anything is sent; the trusted one passes', async (t) => {
  const hosts = new Map([['hooks.valise.test', '127.0.0.1']]);
  const untrusted = await startReceiver({ tls: true, certificate: await untrustedCertificate() });
  t.teardown(untrusted.close);
  const refused = await postJson({ ...base, url: untrusted.url('/untrusted'), allowPrivate: true, hosts });
  t.false(refused.ok);
  t.is(refused.statusCode, null);
  t.regex(refused.error ?? '', /^tls_error: .*self[- ]signed certificate/i);
  t.deepEqual(untrusted.received, [], 'no request reached the receiver');
  // Same name, same table, the certificate the test stack trusts (NODE_EXTRA_CA_CERTS): the refusal was the certificate.
  const trusted = await startReceiver({ tls: true });
  t.teardown(trusted.close);
  const accepted = await postJson({ ...base, url: trusted.url('/trusted'), allowPrivate: true, hosts });
  t.true(accepted.ok, accepted.error ?? '');
  t.is(trusted.received.length, 1);
});
