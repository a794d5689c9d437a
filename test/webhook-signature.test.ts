import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import test from 'ava';
import { Webhook } from 'standardwebhooks';
import {
  DEFAULT_TOLERANCE_SECONDS,
  decodeSecret,
  deliveryHeaders,
  generateWebhookSecret,
  signLegacy,
  signStandard,
  verifyLegacy,
  verifyStandard,
  WebhookVerificationError,
} from '../lib/webhooks/signature.ts';

// Named after standard-webhooks' libraries/javascript/src/webhook.test.ts, with
// its message id, payload and secret (a 24-byte key), but the clock fixed.
const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const PAYLOAD = '{"test": 2432232314}';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NOW = 1_700_000_000;
const at = (now: number) => ({ now });

function mint({ timestamp = NOW, id = ID, payload = PAYLOAD, secrets = [SECRET] } = {}): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signStandard({ id, timestamp, payload, secrets }),
  };
}

function without(headers: Record<string, string>, name: string): Record<string, string> {
  const copy = { ...headers };
  delete copy[name];
  return copy;
}

const refused = (message: RegExp) => ({ instanceOf: WebhookVerificationError, message });

test('sign function works (the reference known-answer vector)', (t) => {
  t.is(
    signStandard({ id: ID, timestamp: 1614265330, payload: PAYLOAD, secrets: [SECRET] }),
    'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  );
});

test('generated secrets are whsec_ and the base64 of 32 random bytes', (t) => {
  const secret = generateWebhookSecret();
  t.regex(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.is(decodeSecret(secret).length, 32);
  t.not(generateWebhookSecret(), secret);
});

test('decodeSecret strips the prefix, which stays optional as in the reference library', (t) => {
  t.deepEqual(decodeSecret(SECRET), Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'));
  t.deepEqual(decodeSecret(SECRET.slice('whsec_'.length)), decodeSecret(SECRET));
});

test('malformed secrets fail with a clear error that does not quote them', (t) => {
  const cases: Array<[string, RegExp]> = [
    ['', /expected whsec_<base64>/],
    ['whsec_', /expected whsec_<base64>/],
    ['whsec_not base64 at all!', /expected whsec_<base64>/],
    ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS', /expected whsec_<base64>/], // 31 characters: truncated
    ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2La-_Sw', /expected whsec_<base64>/], // base64url alphabet
    [`whsec_${Buffer.alloc(16).toString('base64')}`, /decodes to 16 bytes, expected 24 to 64/],
    [`whsec_${Buffer.alloc(65).toString('base64')}`, /decodes to 65 bytes, expected 24 to 64/],
  ];
  for (const [secret, message] of cases) {
    const error = t.throws(() => decodeSecret(secret), { message }, JSON.stringify(secret));
    if (secret.length > 'whsec_'.length) t.false(error?.message.includes(secret.slice(6)));
  }
  t.throws(() => verifyStandard(PAYLOAD, mint(), 'whsec_???', at(NOW)), { message: /Malformed webhook secret/ });
});

test('valid signature is valid and returns valid json', (t) => {
  t.deepEqual(verifyStandard(PAYLOAD, mint(), SECRET, at(NOW)), { test: 2432232314 });
});

test('header names are matched in any case', (t) => {
  const headers = mint();
  const shouted = {
    'Webhook-Id': headers['webhook-id'],
    'WEBHOOK-TIMESTAMP': headers['webhook-timestamp'],
    'webhook-Signature': headers['webhook-signature'],
  };
  t.deepEqual(verifyStandard(PAYLOAD, shouted, SECRET, at(NOW)), { test: 2432232314 });
});

test('missing id raises error', (t) => {
  t.throws(
    () => verifyStandard(PAYLOAD, without(mint(), 'webhook-id'), SECRET, at(NOW)),
    refused(/^Missing webhook-id/),
  );
});

test('missing timestamp raises error', (t) => {
  t.throws(
    () => verifyStandard(PAYLOAD, without(mint(), 'webhook-timestamp'), SECRET, at(NOW)),
    refused(/^Missing webhook-timestamp/),
  );
});

test('invalid timestamp throws error', (t) => {
  for (const value of [
    'hello',
    `${NOW}.5`,
    `${NOW}abc`,
    '1.7e9',
    `-${NOW}`,
    `+${NOW}`,
    ` ${NOW}`,
    `0${NOW}`,
    '9'.repeat(16),
  ]) {
    t.throws(
      () => verifyStandard(PAYLOAD, { ...mint(), 'webhook-timestamp': value }, SECRET, at(NOW)),
      refused(/^Invalid webhook-timestamp: not an integer$/),
      value,
    );
  }
});

test('missing signature raises error', (t) => {
  t.throws(
    () => verifyStandard(PAYLOAD, without(mint(), 'webhook-signature'), SECRET, at(NOW)),
    refused(/^Missing webhook-signature/),
  );
  t.throws(
    () => verifyStandard(PAYLOAD, { ...mint(), 'webhook-signature': '' }, SECRET, at(NOW)),
    refused(/^Missing webhook-signature/),
  );
});

test('a header sent twice is refused rather than guessed at', (t) => {
  const headers = { ...mint(), 'webhook-id': [ID, 'msg_other'] };
  t.throws(() => verifyStandard(PAYLOAD, headers, SECRET, at(NOW)), refused(/^More than one webhook-id header$/));
});

test('invalid signature throws error', (t) => {
  t.throws(
    () => verifyStandard(PAYLOAD, { ...mint(), 'webhook-signature': 'v1,dawfeoifkpqwoekfpqoekf' }, SECRET, at(NOW)),
    refused(/^No matching signature found$/),
  );
});

test('partial signature throws error', (t) => {
  const full = mint()['webhook-signature'] ?? '';
  for (const partial of [full.slice(0, 8), full.slice(0, -1), 'v1,', 'v1', full.replace('v1,', 'v1')]) {
    t.throws(
      () => verifyStandard(PAYLOAD, { ...mint(), 'webhook-signature': partial }, SECRET, at(NOW)),
      refused(/^No matching signature found$/),
      partial,
    );
  }
});

test('old timestamp fails', (t) => {
  t.throws(
    () => verifyStandard(PAYLOAD, mint({ timestamp: NOW - 301 }), SECRET, at(NOW)),
    refused(/^Message timestamp too old$/),
  );
});

test('new timestamp fails', (t) => {
  t.throws(
    () => verifyStandard(PAYLOAD, mint({ timestamp: NOW + 301 }), SECRET, at(NOW)),
    refused(/^Message timestamp too new$/),
  );
});

test('exact tolerance edges: 300 seconds either way pass, 301 fail', (t) => {
  t.is(DEFAULT_TOLERANCE_SECONDS, 300);
  for (const skew of [-300, -1, 0, 1, 300]) {
    t.notThrows(() => verifyStandard(PAYLOAD, mint({ timestamp: NOW + skew }), SECRET, at(NOW)), String(skew));
  }
  t.throws(() => verifyStandard(PAYLOAD, mint({ timestamp: NOW - 301 }), SECRET, at(NOW)), refused(/too old/));
  t.throws(() => verifyStandard(PAYLOAD, mint({ timestamp: NOW + 301 }), SECRET, at(NOW)), refused(/too new/));
  // The same edges with a tolerance of the caller's choosing.
  const options = { now: NOW, toleranceSeconds: 10 };
  t.notThrows(() => verifyStandard(PAYLOAD, mint({ timestamp: NOW - 10 }), SECRET, options));
  t.notThrows(() => verifyStandard(PAYLOAD, mint({ timestamp: NOW + 10 }), SECRET, options));
  t.throws(() => verifyStandard(PAYLOAD, mint({ timestamp: NOW - 11 }), SECRET, options), refused(/too old/));
  t.throws(() => verifyStandard(PAYLOAD, mint({ timestamp: NOW + 11 }), SECRET, options), refused(/too new/));
});

test('a clock that is not a number is a programming error, not a pass', (t) => {
  for (const options of [
    { now: Number.NaN },
    { now: NOW, toleranceSeconds: Number.NaN },
    { now: NOW, toleranceSeconds: -1 },
  ]) {
    t.throws(() => verifyStandard(PAYLOAD, mint(), SECRET, options), { instanceOf: TypeError });
    t.throws(
      () => verifyLegacy(PAYLOAD, signLegacy({ timestamp: NOW, payload: PAYLOAD, secret: SECRET }), SECRET, options),
      {
        instanceOf: TypeError,
      },
    );
  }
});

test('the timestamp is checked before the signature, and is itself signed', (t) => {
  // A stale message with a valid signature is still refused…
  t.throws(() => verifyStandard(PAYLOAD, mint({ timestamp: NOW - 3600 }), SECRET, at(NOW)), refused(/too old/));
  // …and freshening its timestamp breaks the signature.
  const stale = mint({ timestamp: NOW - 3600 });
  t.throws(
    () => verifyStandard(PAYLOAD, { ...stale, 'webhook-timestamp': String(NOW) }, SECRET, at(NOW)),
    refused(/^No matching signature found$/),
  );
});

test('multi sig payload is valid (multiple signatures, one valid)', (t) => {
  const valid = mint()['webhook-signature'];
  const signatures = [
    'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
    'v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
    valid,
    'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
  ].join(' ');
  t.deepEqual(verifyStandard(PAYLOAD, { ...mint(), 'webhook-signature': signatures }, SECRET, at(NOW)), {
    test: 2432232314,
  });
});

test('unknown version prefix is ignored', (t) => {
  const digest = (mint()['webhook-signature'] ?? '').slice('v1,'.length);
  // The right digest under another version is not a v1 signature.
  for (const entry of [`v1a,${digest}`, `v2,${digest}`, `V1,${digest}`, digest]) {
    t.throws(
      () => verifyStandard(PAYLOAD, { ...mint(), 'webhook-signature': entry }, SECRET, at(NOW)),
      refused(/^No matching signature found$/),
      entry,
    );
  }
  // Asymmetric (v1a) entries beside a v1 one are skipped, not an error.
  const mixed = `v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg== v1,${digest}`;
  t.notThrows(() => verifyStandard(PAYLOAD, { ...mint(), 'webhook-signature': mixed }, SECRET, at(NOW)));
});

test('empty payload: a signed empty body verifies and yields undefined; it cannot borrow another signature', (t) => {
  t.is(verifyStandard('', mint({ payload: '' }), SECRET, at(NOW)), undefined);
  t.throws(() => verifyStandard('', mint(), SECRET, at(NOW)), refused(/^No matching signature found$/));
});

test('wrong secret fails', (t) => {
  t.throws(
    () => verifyStandard(PAYLOAD, mint(), generateWebhookSecret(), at(NOW)),
    refused(/^No matching signature found$/),
  );
});

test('every signed part is covered: altering the body, id or timestamp fails', (t) => {
  const headers = mint();
  t.throws(() => verifyStandard('{"test": 2432232315}', headers, SECRET, at(NOW)), refused(/No matching/));
  t.throws(() => verifyStandard(`${PAYLOAD} `, headers, SECRET, at(NOW)), refused(/No matching/));
  t.throws(() => verifyStandard(PAYLOAD, { ...headers, 'webhook-id': 'msg_other' }, SECRET, at(NOW)), refused(/No/));
  t.throws(
    () => verifyStandard(PAYLOAD, { ...headers, 'webhook-timestamp': String(NOW + 1) }, SECRET, at(NOW)),
    refused(/No matching/),
  );
});

test('nothing is parsed before the signature matches', (t) => {
  const notJson = 'this is {not json';
  t.throws(() => verifyStandard(notJson, mint(), SECRET, at(NOW)), refused(/^No matching signature found$/));
  t.throws(
    () => verifyStandard(notJson, mint({ payload: notJson }), SECRET, at(NOW)),
    refused(/^Payload is not valid JSON$/),
  );
});

test('the raw body may be a Buffer, non-ASCII included', (t) => {
  const payload = JSON.stringify({ name: 'Résumé — 履歴書.pdf' });
  t.deepEqual(verifyStandard(Buffer.from(payload), mint({ payload }), SECRET, at(NOW)), {
    name: 'Résumé — 履歴書.pdf',
  });
});

test('each failure mode has its own message', (t) => {
  const messages = new Set<string>();
  const failures: Array<() => unknown> = [
    () => verifyStandard(PAYLOAD, without(mint(), 'webhook-id'), SECRET, at(NOW)),
    () => verifyStandard(PAYLOAD, without(mint(), 'webhook-timestamp'), SECRET, at(NOW)),
    () => verifyStandard(PAYLOAD, without(mint(), 'webhook-signature'), SECRET, at(NOW)),
    () => verifyStandard(PAYLOAD, { ...mint(), 'webhook-timestamp': 'x' }, SECRET, at(NOW)),
    () => verifyStandard(PAYLOAD, mint(), SECRET, at(NOW + 301)),
    () => verifyStandard(PAYLOAD, mint(), SECRET, at(NOW - 301)),
    () => verifyStandard(PAYLOAD, mint(), generateWebhookSecret(), at(NOW)),
    () => verifyStandard('x', mint({ payload: 'x' }), SECRET, at(NOW)),
  ];
  for (const failure of failures)
    messages.add(t.throws(failure, { instanceOf: WebhookVerificationError })?.message ?? '');
  t.is(messages.size, failures.length);
});

test('signing refuses ids that would blur the signed text, bad timestamps and no secrets', (t) => {
  for (const id of ['', 'msg.1', 'msg 1', 'msg\n1', 'é', 'x'.repeat(256)]) {
    t.throws(() => signStandard({ id, timestamp: NOW, payload: PAYLOAD, secrets: [SECRET] }), { message: /id/ }, id);
  }
  for (const timestamp of [NOW + 0.5, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
    t.throws(() => signStandard({ id: ID, timestamp, payload: PAYLOAD, secrets: [SECRET] }), { message: /seconds/ });
    t.throws(() => signLegacy({ timestamp, payload: PAYLOAD, secret: SECRET }), { message: /seconds/ });
  }
  t.throws(() => signStandard({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [] }), { message: /secret/ });
  t.throws(() => deliveryHeaders({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [] }), { message: /secret/ });
});

test('rotation: headers signed with [old, new] verify with either secret alone', (t) => {
  const old = generateWebhookSecret();
  const current = generateWebhookSecret();
  const headers = deliveryHeaders({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [old, current] });
  const signatures = headers['webhook-signature'].split(' ');
  t.is(signatures.length, 2);
  t.is(signatures[0], signStandard({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [old] }));
  t.is(signatures[1], signStandard({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [current] }));
  t.deepEqual(verifyStandard(PAYLOAD, headers, old, at(NOW)), { test: 2432232314 });
  t.deepEqual(verifyStandard(PAYLOAD, headers, current, at(NOW)), { test: 2432232314 });
  t.throws(() => verifyStandard(PAYLOAD, headers, generateWebhookSecret(), at(NOW)), refused(/No matching/));
  // The legacy header carries one signature: the newest (last) secret's.
  t.notThrows(() => verifyLegacy(PAYLOAD, headers['x-service-signature'], current, at(NOW)));
  t.throws(() => verifyLegacy(PAYLOAD, headers['x-service-signature'], old, at(NOW)), refused(/No matching/));
});

test('deliveryHeaders: exactly the five headers, consistent with each signer', (t) => {
  const headers = deliveryHeaders({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [SECRET] });
  t.deepEqual(Object.keys(headers).sort(), [
    'content-type',
    'webhook-id',
    'webhook-signature',
    'webhook-timestamp',
    'x-service-signature',
  ]);
  t.is(headers['content-type'], 'application/json');
  t.is(headers['webhook-id'], ID);
  t.is(headers['webhook-timestamp'], String(NOW));
  t.is(headers['webhook-signature'], signStandard({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [SECRET] }));
  t.is(headers['x-service-signature'], signLegacy({ timestamp: NOW, payload: PAYLOAD, secret: SECRET }));
  t.deepEqual(verifyStandard(PAYLOAD, headers, SECRET, at(NOW)), { test: 2432232314 });
});

// Legacy X-Service-Signature.

const legacy = (timestamp = NOW, payload = PAYLOAD, secret = SECRET) => signLegacy({ timestamp, payload, secret });

test('legacy: the signature is hex HMAC-SHA256 over exactly "{timestamp}.{body}" with the decoded key', (t) => {
  const expected = createHmac('sha256', decodeSecret(SECRET)).update(`${NOW}.${PAYLOAD}`).digest('hex');
  t.is(legacy(), `t=${NOW},v1=${expected}`);
});

test('legacy: round-trip returns the parsed body; edges of the tolerance hold', (t) => {
  t.deepEqual(verifyLegacy(PAYLOAD, legacy(), SECRET, at(NOW)), { test: 2432232314 });
  t.notThrows(() => verifyLegacy(PAYLOAD, legacy(NOW - 300), SECRET, at(NOW)));
  t.notThrows(() => verifyLegacy(PAYLOAD, legacy(NOW + 300), SECRET, at(NOW)));
  t.throws(() => verifyLegacy(PAYLOAD, legacy(NOW - 301), SECRET, at(NOW)), refused(/^Message timestamp too old$/));
  t.throws(() => verifyLegacy(PAYLOAD, legacy(NOW + 301), SECRET, at(NOW)), refused(/^Message timestamp too new$/));
  t.is(verifyLegacy('', legacy(NOW, ''), SECRET, at(NOW)), undefined);
});

test('legacy: wrong secret, altered body or timestamp, and partial signatures fail', (t) => {
  const header = legacy();
  const noMatch = refused(/^No matching signature found$/);
  t.throws(() => verifyLegacy(PAYLOAD, header, generateWebhookSecret(), at(NOW)), noMatch);
  t.throws(() => verifyLegacy(`${PAYLOAD} `, header, SECRET, at(NOW)), noMatch);
  t.throws(() => verifyLegacy(PAYLOAD, header.replace(`t=${NOW}`, `t=${NOW + 1}`), SECRET, at(NOW)), noMatch);
  t.throws(() => verifyLegacy(PAYLOAD, header.slice(0, -1), SECRET, at(NOW)), noMatch);
  t.throws(
    () => verifyLegacy(PAYLOAD, header.toUpperCase().replace('T=', 't=').replace('V1=', 'v1='), SECRET, at(NOW)),
    noMatch,
  );
  t.throws(() => verifyLegacy(PAYLOAD, `t=${NOW}`, SECRET, at(NOW)), noMatch);
});

test('legacy: missing, repeated and malformed headers are refused', (t) => {
  t.throws(() => verifyLegacy(PAYLOAD, undefined, SECRET, at(NOW)), refused(/^Missing x-service-signature header$/));
  t.throws(() => verifyLegacy(PAYLOAD, '', SECRET, at(NOW)), refused(/^Missing x-service-signature header$/));
  t.throws(() => verifyLegacy(PAYLOAD, [legacy(), legacy()], SECRET, at(NOW)), refused(/^More than one/));
  const v1 = legacy().split(',')[1];
  for (const header of [`${v1}`, `t=${NOW},t=${NOW},${v1}`, 'garbage']) {
    t.throws(() => verifyLegacy(PAYLOAD, header, SECRET, at(NOW)), refused(/expected exactly one t=/), header);
  }
  for (const header of [`t=abc,${v1}`, `t=${NOW}.0,${v1}`, `t=,${v1}`]) {
    t.throws(() => verifyLegacy(PAYLOAD, header, SECRET, at(NOW)), refused(/not an integer/), header);
  }
});

test('legacy: several v1 entries with one valid pass; unknown keys are ignored', (t) => {
  const [timestamp, v1] = legacy().split(',');
  t.notThrows(() => verifyLegacy(PAYLOAD, `${timestamp},v1=${'0'.repeat(64)},${v1}`, SECRET, at(NOW)));
  t.notThrows(() => verifyLegacy(PAYLOAD, `${timestamp},v0=deadbeef,${v1},note`, SECRET, at(NOW)));
});

// Compatibility with the `standardwebhooks` package, both ways.

test('compat: our signStandard verifies with standardwebhooks (real clock, as that package reads it)', (t) => {
  const secret = generateWebhookSecret();
  const now = Math.floor(Date.now() / 1000);
  const payload = JSON.stringify({ type: 'transfer.downloaded', data: { transfer: { id: 'x', status: 'active' } } });
  const headers = deliveryHeaders({
    id: 'evt_3f2a9c1e7b5d4a8f9e0c6b1d2a7f4e85',
    timestamp: now,
    payload,
    secrets: [secret],
  });
  t.deepEqual(new Webhook(secret).verify(payload, headers), JSON.parse(payload));
  // Rotation headers verify with either secret in their verifier too.
  const old = generateWebhookSecret();
  const rotated = deliveryHeaders({ id: 'evt_1', timestamp: now, payload, secrets: [old, secret] });
  t.notThrows(() => new Webhook(old).verify(payload, rotated));
  t.notThrows(() => new Webhook(secret).verify(payload, rotated));
  t.throws(() => new Webhook(generateWebhookSecret()).verify(payload, rotated));
  // The reference secret (24 bytes, no padding) too.
  t.notThrows(() => new Webhook(SECRET).verify(PAYLOAD, mint({ timestamp: now })));
});

test('compat: a standardwebhooks signature verifies with our verifyStandard', (t) => {
  for (const secret of [SECRET, generateWebhookSecret()]) {
    const signature = new Webhook(secret).sign(ID, new Date(NOW * 1000), PAYLOAD);
    const headers = { 'webhook-id': ID, 'webhook-timestamp': String(NOW), 'webhook-signature': signature };
    t.deepEqual(verifyStandard(PAYLOAD, headers, secret, at(NOW)), { test: 2432232314 });
    t.is(signature, signStandard({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [secret] }));
  }
});

// The worked example in docs/webhooks.md, "Signatures": re-derived here, and
// every value must appear in the doc verbatim, so neither can drift.

const EXAMPLE = {
  secret: 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=',
  id: 'evt_3f2a9c1e7b5d4a8f9e0c6b1d2a7f4e85',
  timestamp: 1778751000,
  payload:
    '{"id":"evt_3f2a9c1e7b5d4a8f9e0c6b1d2a7f4e85","type":"transfer.downloaded","timestamp":"2026-05-14T09:29:58.412Z","data":{"transfer":{"id":"0b9e4c7a-5d21-4f3e-8a6b-2c1d9e7f4a30","short_code":"k7Qp2Xz9Lm","status":"active"}}}',
  signature: 'v1,kJ6JK9020ZEJOmPPf+DLQ2rsQyjd3KFVsEhGQRdKyb8=',
  legacy: 't=1778751000,v1=afda2fccd469e4bd69ef36bcd0119b262d1d34a461fa3c4afb78972b16de1adf',
};

test('docs/webhooks.md worked example matches the code', (t) => {
  const doc = readFileSync(new URL('../docs/webhooks.md', import.meta.url), 'utf8');
  const { secret, id, timestamp, payload } = EXAMPLE;
  // The key is the 32 bytes 0x00…0x1f, as the doc says.
  t.deepEqual(decodeSecret(secret), Buffer.from(Array.from({ length: 32 }, (_, i) => i)));
  const headers = deliveryHeaders({ id, timestamp, payload, secrets: [secret] });
  t.deepEqual(headers, {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': EXAMPLE.signature,
    'x-service-signature': EXAMPLE.legacy,
    'content-type': 'application/json',
  });
  t.deepEqual(verifyStandard(payload, headers, secret, at(timestamp)), JSON.parse(payload));
  t.deepEqual(verifyLegacy(payload, headers['x-service-signature'], secret, at(timestamp)), JSON.parse(payload));
  const signedStandard = `${id}.${timestamp}.${payload}`;
  const signedLegacy = `${timestamp}.${payload}`;
  for (const value of [
    secret,
    payload,
    signedStandard,
    signedLegacy,
    `webhook-id: ${id}`,
    `webhook-timestamp: ${timestamp}`,
    `webhook-signature: ${EXAMPLE.signature}`,
    `x-service-signature: ${EXAMPLE.legacy}`,
  ]) {
    t.true(doc.includes(value), `docs/webhooks.md should contain ${value.slice(0, 60)}…`);
  }
});
