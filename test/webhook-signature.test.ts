import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import test from 'ava';
import { Webhook } from 'standardwebhooks';
import * as server from '../lib/webhooks/signature.ts';
import { generateWebhookSecret } from '../lib/webhooks/signature.ts';
import { InvalidArgumentError, Valise } from '../sdk/src/index.ts';
import {
  DEFAULT_TOLERANCE_SECONDS,
  decodeSecret,
  deliveryHeaders,
  signLegacy,
  signStandard,
  verifyLegacy,
  verifyStandard,
  WebhookVerificationError,
} from '../sdk/src/webhook-signature.ts';

// The one signature scheme (sdk/src/webhook-signature.ts): what the server signs
// with (lib/webhooks/signature.ts) and customers verify with
// (`Valise.webhooks.verify`). Named after standard-webhooks'
// libraries/javascript/src/webhook.test.ts, with its message id, payload and
// secret (a 24-byte key), but the clock fixed.
const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const PAYLOAD = '{"test": 2432232314}';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NOW = 1_700_000_000;
/** The clock at `seconds` past the epoch (`now` is in milliseconds, as Date.now() gives it). */
const at = (seconds: number) => ({ now: seconds * 1000 });

async function mint({
  timestamp = NOW,
  id = ID,
  payload = PAYLOAD,
  secrets = [SECRET],
} = {}): Promise<Record<string, string>> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': await signStandard({ id, timestamp, payload, secrets }),
  };
}

function without(headers: Record<string, string>, name: string): Record<string, string> {
  const copy = { ...headers };
  delete copy[name];
  return copy;
}

const refused = (message: RegExp) => ({ instanceOf: WebhookVerificationError, message });

test('sign function works (the reference known-answer vector)', async (t) => {
  t.is(
    await signStandard({ id: ID, timestamp: 1614265330, payload: PAYLOAD, secrets: [SECRET] }),
    'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  );
});

test('generated secrets are whsec_ and the base64 of 32 random bytes', async (t) => {
  const secret = generateWebhookSecret();
  t.regex(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.is(decodeSecret(secret).length, 32);
  t.not(generateWebhookSecret(), secret);
});

test('decodeSecret strips the prefix, which stays optional as in the reference library', (t) => {
  t.deepEqual(decodeSecret(SECRET), new Uint8Array(Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64')));
  t.deepEqual(decodeSecret(SECRET.slice('whsec_'.length)), decodeSecret(SECRET));
});

test('malformed secrets fail with a clear error that does not quote them', async (t) => {
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
    const error = t.throws(
      () => decodeSecret(secret),
      { instanceOf: InvalidArgumentError, message },
      JSON.stringify(secret),
    );
    if (secret.length > 'whsec_'.length) t.false(error?.message.includes(secret.slice(6)));
  }
  await t.throwsAsync(verifyStandard(PAYLOAD, await mint(), 'whsec_???', at(NOW)), {
    message: /Malformed webhook secret/,
  });
});

test('one implementation: the server signs with the functions the SDK verifies with', async (t) => {
  // The server's deliveryHeaders is the SDK's with node:crypto's HMAC: the same headers, byte for byte.
  const other = 'whsec_dGhpcyBpcyBhIDMyIGJ5dGUgc2VjcmV0IGZvciB0ZXN0cyE=';
  for (const secrets of [[SECRET], [other, SECRET]]) {
    const input = { id: ID, timestamp: NOW, payload: PAYLOAD, secrets };
    t.deepEqual(await server.deliveryHeaders(input), await deliveryHeaders(input));
    const bytes = { ...input, payload: Buffer.from('é\u0000') };
    t.deepEqual(await server.deliveryHeaders(bytes), await deliveryHeaders(bytes));
  }
  t.is(server.signStandard, signStandard);
  t.is(server.signLegacy, signLegacy);
  t.is(server.verifyStandard, verifyStandard);
  t.is(server.verifyLegacy, verifyLegacy);
  t.is(server.WebhookVerificationError, WebhookVerificationError);
  // Valise.webhooks.verify is verifyStandard with the clock read by default: same answers, same errors.
  const headers = await mint({ timestamp: Math.floor(Date.now() / 1000) });
  t.deepEqual(await Valise.webhooks.verify(PAYLOAD, headers, SECRET), { test: 2432232314 });
  await t.throwsAsync(Valise.webhooks.verify(PAYLOAD, { ...headers, 'webhook-id': [ID, ID] }, SECRET), {
    instanceOf: WebhookVerificationError,
    message: /^More than one webhook-id header$/,
  });
});

test('valid signature is valid and returns valid json', async (t) => {
  t.deepEqual(await verifyStandard(PAYLOAD, await mint(), SECRET, at(NOW)), { test: 2432232314 });
});

test('header names are matched in any case', async (t) => {
  const headers = await mint();
  const shouted = {
    'Webhook-Id': headers['webhook-id'],
    'WEBHOOK-TIMESTAMP': headers['webhook-timestamp'],
    'webhook-Signature': headers['webhook-signature'],
  };
  t.deepEqual(await verifyStandard(PAYLOAD, shouted, SECRET, at(NOW)), { test: 2432232314 });
});

test('missing id raises error', async (t) => {
  await t.throwsAsync(
    verifyStandard(PAYLOAD, without(await mint(), 'webhook-id'), SECRET, at(NOW)),
    refused(/^Missing webhook-id/),
  );
});

test('missing timestamp raises error', async (t) => {
  await t.throwsAsync(
    verifyStandard(PAYLOAD, without(await mint(), 'webhook-timestamp'), SECRET, at(NOW)),
    refused(/^Missing webhook-timestamp/),
  );
});

test('invalid timestamp throws error', async (t) => {
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
    await t.throwsAsync(
      verifyStandard(PAYLOAD, { ...(await mint()), 'webhook-timestamp': value }, SECRET, at(NOW)),
      refused(/^Invalid webhook-timestamp: not an integer$/),
      value,
    );
  }
});

test('missing signature raises error', async (t) => {
  await t.throwsAsync(
    verifyStandard(PAYLOAD, without(await mint(), 'webhook-signature'), SECRET, at(NOW)),
    refused(/^Missing webhook-signature/),
  );
  await t.throwsAsync(
    verifyStandard(PAYLOAD, { ...(await mint()), 'webhook-signature': '' }, SECRET, at(NOW)),
    refused(/^Missing webhook-signature/),
  );
});

test('a header sent twice is refused rather than guessed at', async (t) => {
  const headers = { ...(await mint()), 'webhook-id': [ID, 'msg_other'] };
  await t.throwsAsync(verifyStandard(PAYLOAD, headers, SECRET, at(NOW)), refused(/^More than one webhook-id header$/));
});

test('invalid signature throws error', async (t) => {
  await t.throwsAsync(
    verifyStandard(PAYLOAD, { ...(await mint()), 'webhook-signature': 'v1,dawfeoifkpqwoekfpqoekf' }, SECRET, at(NOW)),
    refused(/^No matching signature found$/),
  );
});

test('partial signature throws error', async (t) => {
  const full = (await mint())['webhook-signature'] ?? '';
  for (const partial of [full.slice(0, 8), full.slice(0, -1), 'v1,', 'v1', full.replace('v1,', 'v1')]) {
    await t.throwsAsync(
      verifyStandard(PAYLOAD, { ...(await mint()), 'webhook-signature': partial }, SECRET, at(NOW)),
      refused(/^No matching signature found$/),
      partial,
    );
  }
});

test('old timestamp fails', async (t) => {
  await t.throwsAsync(
    verifyStandard(PAYLOAD, await mint({ timestamp: NOW - 301 }), SECRET, at(NOW)),
    refused(/^Message timestamp too old$/),
  );
});

test('new timestamp fails', async (t) => {
  await t.throwsAsync(
    verifyStandard(PAYLOAD, await mint({ timestamp: NOW + 301 }), SECRET, at(NOW)),
    refused(/^Message timestamp too new$/),
  );
});

test('exact tolerance edges: 300 seconds either way pass, 301 fail', async (t) => {
  t.is(DEFAULT_TOLERANCE_SECONDS, 300);
  for (const skew of [-300, -1, 0, 1, 300]) {
    await t.notThrowsAsync(
      verifyStandard(PAYLOAD, await mint({ timestamp: NOW + skew }), SECRET, at(NOW)),
      String(skew),
    );
  }
  await t.throwsAsync(
    verifyStandard(PAYLOAD, await mint({ timestamp: NOW - 301 }), SECRET, at(NOW)),
    refused(/too old/),
  );
  await t.throwsAsync(
    verifyStandard(PAYLOAD, await mint({ timestamp: NOW + 301 }), SECRET, at(NOW)),
    refused(/too new/),
  );
  // The same edges with a tolerance of the caller's choosing.
  const options = { ...at(NOW), toleranceSeconds: 10 };
  await t.notThrowsAsync(verifyStandard(PAYLOAD, await mint({ timestamp: NOW - 10 }), SECRET, options));
  await t.notThrowsAsync(verifyStandard(PAYLOAD, await mint({ timestamp: NOW + 10 }), SECRET, options));
  await t.throwsAsync(
    verifyStandard(PAYLOAD, await mint({ timestamp: NOW - 11 }), SECRET, options),
    refused(/too old/),
  );
  await t.throwsAsync(
    verifyStandard(PAYLOAD, await mint({ timestamp: NOW + 11 }), SECRET, options),
    refused(/too new/),
  );
});

test('a clock that is not a number is a programming error, not a pass', async (t) => {
  for (const options of [
    { now: Number.NaN },
    { now: new Date(Number.NaN) },
    { now: NOW * 1000, toleranceSeconds: Number.NaN },
    { now: NOW * 1000, toleranceSeconds: -1 },
  ]) {
    const wrong = { instanceOf: InvalidArgumentError, message: /^(now|toleranceSeconds): / };
    await t.throwsAsync(verifyStandard(PAYLOAD, await mint(), SECRET, options), wrong);
    // Before anything of the delivery is looked at, so the mistake shows whatever comes in.
    await t.throwsAsync(verifyStandard(PAYLOAD, {}, SECRET, options), wrong);
    const header = await signLegacy({ timestamp: NOW, payload: PAYLOAD, secret: SECRET });
    await t.throwsAsync(verifyLegacy(PAYLOAD, header, SECRET, options), wrong);
  }
});

test('the timestamp is checked before the signature, and is itself signed', async (t) => {
  // A stale message with a valid signature is still refused…
  await t.throwsAsync(
    verifyStandard(PAYLOAD, await mint({ timestamp: NOW - 3600 }), SECRET, at(NOW)),
    refused(/too old/),
  );
  // …and freshening its timestamp breaks the signature.
  const stale = await mint({ timestamp: NOW - 3600 });
  await t.throwsAsync(
    verifyStandard(PAYLOAD, { ...stale, 'webhook-timestamp': String(NOW) }, SECRET, at(NOW)),
    refused(/^No matching signature found$/),
  );
});

test('multi sig payload is valid (multiple signatures, one valid)', async (t) => {
  const valid = (await mint())['webhook-signature'];
  const signatures = [
    'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
    'v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
    valid,
    'v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=',
  ].join(' ');
  t.deepEqual(await verifyStandard(PAYLOAD, { ...(await mint()), 'webhook-signature': signatures }, SECRET, at(NOW)), {
    test: 2432232314,
  });
});

test('unknown version prefix is ignored', async (t) => {
  const digest = ((await mint())['webhook-signature'] ?? '').slice('v1,'.length);
  // The right digest under another version is not a v1 signature.
  for (const entry of [`v1a,${digest}`, `v2,${digest}`, `V1,${digest}`, digest]) {
    await t.throwsAsync(
      verifyStandard(PAYLOAD, { ...(await mint()), 'webhook-signature': entry }, SECRET, at(NOW)),
      refused(/^No matching signature found$/),
      entry,
    );
  }
  // Asymmetric (v1a) entries beside a v1 one are skipped, not an error.
  const mixed = `v1a,hnO3f9T8Ytu9HwrXslvumlUpqtNVqkhqw/enGzPCXe5BdqzCInXqYXFymVJaA7AZdpXwVLPo3mNl8EM+m7TBAg== v1,${digest}`;
  await t.notThrowsAsync(verifyStandard(PAYLOAD, { ...(await mint()), 'webhook-signature': mixed }, SECRET, at(NOW)));
});

test('empty payload: a signed empty body is refused with its own message (no event); it cannot borrow another signature', async (t) => {
  // The reference library returns undefined here; every Valise delivery is a JSON event, so an
  // authentic empty body is reported as such rather than handed on as an event (docs/webhooks.md).
  await t.throwsAsync(
    verifyStandard('', await mint({ payload: '' }), SECRET, at(NOW)),
    refused(/^Signed payload is empty: no event to return$/),
  );
  await t.throwsAsync(
    verifyStandard(new Uint8Array(0), await mint({ payload: '' }), SECRET, at(NOW)),
    refused(/^Signed payload is empty/),
  );
  await t.throwsAsync(verifyStandard('', await mint(), SECRET, at(NOW)), refused(/^No matching signature found$/));
});

test('wrong secret fails', async (t) => {
  await t.throwsAsync(
    verifyStandard(PAYLOAD, await mint(), generateWebhookSecret(), at(NOW)),
    refused(/^No matching signature found$/),
  );
});

test('every signed part is covered: altering the body, id or timestamp fails', async (t) => {
  const headers = await mint();
  await t.throwsAsync(verifyStandard('{"test": 2432232315}', headers, SECRET, at(NOW)), refused(/No matching/));
  await t.throwsAsync(verifyStandard(`${PAYLOAD} `, headers, SECRET, at(NOW)), refused(/No matching/));
  await t.throwsAsync(
    verifyStandard(PAYLOAD, { ...headers, 'webhook-id': 'msg_other' }, SECRET, at(NOW)),
    refused(/No/),
  );
  await t.throwsAsync(
    verifyStandard(PAYLOAD, { ...headers, 'webhook-timestamp': String(NOW + 1) }, SECRET, at(NOW)),
    refused(/No matching/),
  );
});

test('nothing is parsed before the signature matches', async (t) => {
  const notJson = 'this is {not json';
  await t.throwsAsync(verifyStandard(notJson, await mint(), SECRET, at(NOW)), refused(/^No matching signature found$/));
  await t.throwsAsync(
    verifyStandard(notJson, await mint({ payload: notJson }), SECRET, at(NOW)),
    refused(/^Payload is not valid JSON$/),
  );
});

test('the raw body may be a Buffer, non-ASCII included', async (t) => {
  const payload = JSON.stringify({ name: 'Résumé — 履歴書.pdf' });
  t.deepEqual(await verifyStandard(Buffer.from(payload), await mint({ payload }), SECRET, at(NOW)), {
    name: 'Résumé — 履歴書.pdf',
  });
});

test('each failure mode has its own message', async (t) => {
  const messages = new Set<string>();
  const failures: Array<() => Promise<unknown>> = [
    async () => verifyStandard(PAYLOAD, without(await mint(), 'webhook-id'), SECRET, at(NOW)),
    async () => verifyStandard(PAYLOAD, without(await mint(), 'webhook-timestamp'), SECRET, at(NOW)),
    async () => verifyStandard(PAYLOAD, without(await mint(), 'webhook-signature'), SECRET, at(NOW)),
    async () => verifyStandard(PAYLOAD, { ...(await mint()), 'webhook-timestamp': 'x' }, SECRET, at(NOW)),
    async () => verifyStandard(PAYLOAD, await mint(), SECRET, at(NOW + 301)),
    async () => verifyStandard(PAYLOAD, await mint(), SECRET, at(NOW - 301)),
    async () => verifyStandard(PAYLOAD, await mint(), generateWebhookSecret(), at(NOW)),
    async () => verifyStandard('x', await mint({ payload: 'x' }), SECRET, at(NOW)),
  ];
  for (const failure of failures) {
    messages.add((await t.throwsAsync(failure, { instanceOf: WebhookVerificationError }))?.message ?? '');
  }
  t.is(messages.size, failures.length);
});

test('signing refuses ids that would blur the signed text, bad timestamps and no secrets', async (t) => {
  for (const id of ['', 'msg.1', 'msg 1', 'msg\n1', 'é', 'x'.repeat(256)]) {
    await t.throwsAsync(
      signStandard({ id, timestamp: NOW, payload: PAYLOAD, secrets: [SECRET] }),
      { message: /id/ },
      id,
    );
  }
  for (const timestamp of [NOW + 0.5, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
    await t.throwsAsync(signStandard({ id: ID, timestamp, payload: PAYLOAD, secrets: [SECRET] }), {
      message: /seconds/,
    });
    await t.throwsAsync(signLegacy({ timestamp, payload: PAYLOAD, secret: SECRET }), { message: /seconds/ });
  }
  await t.throwsAsync(signStandard({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [] }), { message: /secret/ });
  await t.throwsAsync(deliveryHeaders({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [] }), {
    message: /secret/,
  });
});

test('rotation: headers signed with [old, new] verify with either secret alone', async (t) => {
  const old = generateWebhookSecret();
  const current = generateWebhookSecret();
  const headers = await deliveryHeaders({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [old, current] });
  const signatures = headers['webhook-signature'].split(' ');
  t.is(signatures.length, 2);
  t.is(signatures[0], await signStandard({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [old] }));
  t.is(signatures[1], await signStandard({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [current] }));
  t.deepEqual(await verifyStandard(PAYLOAD, headers, old, at(NOW)), { test: 2432232314 });
  t.deepEqual(await verifyStandard(PAYLOAD, headers, current, at(NOW)), { test: 2432232314 });
  await t.throwsAsync(verifyStandard(PAYLOAD, headers, generateWebhookSecret(), at(NOW)), refused(/No matching/));
  // The legacy header carries one signature: the newest (last) secret's.
  await t.notThrowsAsync(verifyLegacy(PAYLOAD, headers['x-service-signature'], current, at(NOW)));
  await t.throwsAsync(verifyLegacy(PAYLOAD, headers['x-service-signature'], old, at(NOW)), refused(/No matching/));
});

test('deliveryHeaders: exactly the five headers, consistent with each signer', async (t) => {
  const headers = await deliveryHeaders({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [SECRET] });
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
  t.is(
    headers['webhook-signature'],
    await signStandard({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [SECRET] }),
  );
  t.is(headers['x-service-signature'], await signLegacy({ timestamp: NOW, payload: PAYLOAD, secret: SECRET }));
  t.deepEqual(await verifyStandard(PAYLOAD, headers, SECRET, at(NOW)), { test: 2432232314 });
});

// Legacy X-Service-Signature.

const legacy = (timestamp = NOW, payload = PAYLOAD, secret = SECRET) => signLegacy({ timestamp, payload, secret });

test('legacy: the signature is hex HMAC-SHA256 over exactly "{timestamp}.{body}" with the decoded key', async (t) => {
  const expected = createHmac('sha256', decodeSecret(SECRET)).update(`${NOW}.${PAYLOAD}`).digest('hex');
  t.is(await legacy(), `t=${NOW},v1=${expected}`);
});

test('legacy: round-trip returns the parsed body; edges of the tolerance hold', async (t) => {
  t.deepEqual(await verifyLegacy(PAYLOAD, await legacy(), SECRET, at(NOW)), { test: 2432232314 });
  await t.notThrowsAsync(verifyLegacy(PAYLOAD, await legacy(NOW - 300), SECRET, at(NOW)));
  await t.notThrowsAsync(verifyLegacy(PAYLOAD, await legacy(NOW + 300), SECRET, at(NOW)));
  await t.throwsAsync(
    verifyLegacy(PAYLOAD, await legacy(NOW - 301), SECRET, at(NOW)),
    refused(/^Message timestamp too old$/),
  );
  await t.throwsAsync(
    verifyLegacy(PAYLOAD, await legacy(NOW + 301), SECRET, at(NOW)),
    refused(/^Message timestamp too new$/),
  );
  await t.throwsAsync(verifyLegacy('', await legacy(NOW, ''), SECRET, at(NOW)), refused(/^Signed payload is empty/));
});

test('legacy: wrong secret, altered body or timestamp, and partial signatures fail', async (t) => {
  const header = await legacy();
  const noMatch = refused(/^No matching signature found$/);
  await t.throwsAsync(verifyLegacy(PAYLOAD, header, generateWebhookSecret(), at(NOW)), noMatch);
  await t.throwsAsync(verifyLegacy(`${PAYLOAD} `, header, SECRET, at(NOW)), noMatch);
  await t.throwsAsync(verifyLegacy(PAYLOAD, header.replace(`t=${NOW}`, `t=${NOW + 1}`), SECRET, at(NOW)), noMatch);
  await t.throwsAsync(verifyLegacy(PAYLOAD, header.slice(0, -1), SECRET, at(NOW)), noMatch);
  await t.throwsAsync(
    verifyLegacy(PAYLOAD, header.toUpperCase().replace('T=', 't=').replace('V1=', 'v1='), SECRET, at(NOW)),
    noMatch,
  );
  await t.throwsAsync(verifyLegacy(PAYLOAD, `t=${NOW}`, SECRET, at(NOW)), noMatch);
});

test('legacy: missing, repeated and malformed headers are refused', async (t) => {
  await t.throwsAsync(
    verifyLegacy(PAYLOAD, undefined, SECRET, at(NOW)),
    refused(/^Missing x-service-signature header$/),
  );
  await t.throwsAsync(verifyLegacy(PAYLOAD, '', SECRET, at(NOW)), refused(/^Missing x-service-signature header$/));
  await t.throwsAsync(
    verifyLegacy(PAYLOAD, [await legacy(), await legacy()], SECRET, at(NOW)),
    refused(/^More than one/),
  );
  const v1 = (await legacy()).split(',')[1];
  for (const header of [`${v1}`, `t=${NOW},t=${NOW},${v1}`, 'garbage']) {
    await t.throwsAsync(verifyLegacy(PAYLOAD, header, SECRET, at(NOW)), refused(/expected exactly one t=/), header);
  }
  for (const header of [`t=abc,${v1}`, `t=${NOW}.0,${v1}`, `t=,${v1}`]) {
    await t.throwsAsync(verifyLegacy(PAYLOAD, header, SECRET, at(NOW)), refused(/not an integer/), header);
  }
});

test('legacy: several v1 entries with one valid pass; unknown keys are ignored', async (t) => {
  const [timestamp, v1] = (await legacy()).split(',');
  await t.notThrowsAsync(verifyLegacy(PAYLOAD, `${timestamp},v1=${'0'.repeat(64)},${v1}`, SECRET, at(NOW)));
  await t.notThrowsAsync(verifyLegacy(PAYLOAD, `${timestamp},v0=deadbeef,${v1},note`, SECRET, at(NOW)));
});

// Compatibility with the `standardwebhooks` package, both ways.

test('compat: our signStandard verifies with standardwebhooks (real clock, as that package reads it)', async (t) => {
  const secret = generateWebhookSecret();
  const now = Math.floor(Date.now() / 1000);
  const payload = JSON.stringify({ type: 'transfer.downloaded', data: { transfer: { id: 'x', status: 'active' } } });
  const headers = await deliveryHeaders({
    id: 'evt_3f2a9c1e7b5d4a8f9e0c6b1d2a7f4e85',
    timestamp: now,
    payload,
    secrets: [secret],
  });
  t.deepEqual(new Webhook(secret).verify(payload, headers), JSON.parse(payload));
  // Rotation headers verify with either secret in their verifier too.
  const old = generateWebhookSecret();
  const rotated = await deliveryHeaders({ id: 'evt_1', timestamp: now, payload, secrets: [old, secret] });
  t.notThrows(() => new Webhook(old).verify(payload, rotated));
  t.notThrows(() => new Webhook(secret).verify(payload, rotated));
  t.throws(() => new Webhook(generateWebhookSecret()).verify(payload, rotated));
  // The reference secret (24 bytes, no padding) too.
  const reference = await mint({ timestamp: now });
  t.notThrows(() => new Webhook(SECRET).verify(PAYLOAD, reference));
});

test('compat: a standardwebhooks signature verifies with our verifyStandard', async (t) => {
  for (const secret of [SECRET, generateWebhookSecret()]) {
    const signature = new Webhook(secret).sign(ID, new Date(NOW * 1000), PAYLOAD);
    const headers = { 'webhook-id': ID, 'webhook-timestamp': String(NOW), 'webhook-signature': signature };
    t.deepEqual(await verifyStandard(PAYLOAD, headers, secret, at(NOW)), { test: 2432232314 });
    t.is(signature, await signStandard({ id: ID, timestamp: NOW, payload: PAYLOAD, secrets: [secret] }));
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

test('docs/webhooks.md worked example matches the code', async (t) => {
  const doc = readFileSync(new URL('../docs/webhooks.md', import.meta.url), 'utf8');
  const { secret, id, timestamp, payload } = EXAMPLE;
  // The key is the 32 bytes 0x00…0x1f, as the doc says.
  t.deepEqual(
    decodeSecret(secret),
    Uint8Array.from({ length: 32 }, (_, i) => i),
  );
  const headers = await deliveryHeaders({ id, timestamp, payload, secrets: [secret] });
  t.deepEqual(headers, {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': EXAMPLE.signature,
    'x-service-signature': EXAMPLE.legacy,
    'content-type': 'application/json',
  });
  t.deepEqual(await verifyStandard(payload, headers, secret, at(timestamp)), JSON.parse(payload));
  t.deepEqual(await verifyLegacy(payload, headers['x-service-signature'], secret, at(timestamp)), JSON.parse(payload));
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
