import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { Valise, WebhookVerificationError } from '../../sdk/src/index.ts';

// Valise.webhooks.verify against the `standardwebhooks` package, both ways,
// and the documented worked example (docs/webhooks.md, "Signatures").

const secret = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
const body =
  '{"id":"evt_3f2a9c1e7b5d4a8f9e0c6b1d2a7f4e85","type":"transfer.downloaded","timestamp":"2026-05-14T09:29:58.412Z","data":{"transfer":{"id":"0b9e4c7a-5d21-4f3e-8a6b-2c1d9e7f4a30","short_code":"k7Qp2Xz9Lm","status":"active"}}}';
const id = 'evt_3f2a9c1e7b5d4a8f9e0c6b1d2a7f4e85';

function headersAt(seconds: number, signature: string) {
  return { 'webhook-id': id, 'webhook-timestamp': String(seconds), 'webhook-signature': signature };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

test('the worked example of docs/webhooks.md verifies at its own time', async (t) => {
  const event = await Valise.webhooks.verify(
    body,
    headersAt(1778751000, 'v1,kJ6JK9020ZEJOmPPf+DLQ2rsQyjd3KFVsEhGQRdKyb8='),
    secret,
    { now: 1778751000 * 1000 },
  );
  t.is(event.type, 'transfer.downloaded');
});

test('what standardwebhooks signs, Valise.webhooks.verify accepts (string, bytes, Headers)', async (t) => {
  const ts = nowSeconds();
  const signature = new Webhook(secret).sign(id, new Date(ts * 1000), body);
  const event = await Valise.webhooks.verify(body, headersAt(ts, signature), secret);
  t.is(event.id, id);
  await t.notThrowsAsync(Valise.webhooks.verify(new TextEncoder().encode(body), headersAt(ts, signature), secret));
  await t.notThrowsAsync(Valise.webhooks.verify(body, new Headers(headersAt(ts, signature)), secret));
});

test('what Valise would accept matches what standardwebhooks accepts, and a rotated pair verifies with either secret', async (t) => {
  const ts = nowSeconds();
  const other = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const oldSignature = new Webhook(other).sign(id, new Date(ts * 1000), body);
  const newSignature = new Webhook(secret).sign(id, new Date(ts * 1000), body);
  const headers = headersAt(ts, `v1a,ignored ${oldSignature} ${newSignature}`);
  // The reverse direction: the same headers pass standardwebhooks' own verify.
  t.deepEqual(new Webhook(secret).verify(body, headers), await Valise.webhooks.verify(body, headers, secret));
  t.deepEqual(new Webhook(other).verify(body, headers), await Valise.webhooks.verify(body, headers, other));
});

test('a tampered body, a wrong secret or a missing header is refused, like standardwebhooks does', async (t) => {
  const ts = nowSeconds();
  const signature = new Webhook(secret).sign(id, new Date(ts * 1000), body);
  const cases: Array<[string, Record<string, string>, string]> = [
    [`${body} `, headersAt(ts, signature), secret],
    [body, headersAt(ts, signature), 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    [body, { 'webhook-id': id, 'webhook-signature': signature }, secret],
    [body, headersAt(ts, signature.replace('v1,', 'v2,')), secret],
  ];
  for (const [payload, headers, key] of cases) {
    t.throws(() => new Webhook(key).verify(payload, headers));
    await t.throwsAsync(Valise.webhooks.verify(payload, headers, key), { instanceOf: WebhookVerificationError });
  }
});

test('the 5-minute tolerance holds both ways, on both sides: 300 s passes, 301 s fails', async (t) => {
  const now = nowSeconds();
  // standardwebhooks reads the clock itself: its checks run on a timestamp taken in the same
  // second as its own reading, taken again if the second turned in between.
  const referenceVerify = (offset: number) => {
    for (;;) {
      const second = nowSeconds();
      const ts = second + offset;
      const signature = new Webhook(secret).sign(id, new Date(ts * 1000), body);
      const verify = () => new Webhook(secret).verify(body, headersAt(ts, signature));
      if (nowSeconds() === second) return verify;
    }
  };
  for (const offset of [-300, 300]) {
    const ts = now + offset;
    const signature = new Webhook(secret).sign(id, new Date(ts * 1000), body);
    await t.notThrowsAsync(Valise.webhooks.verify(body, headersAt(ts, signature), secret, { now: now * 1000 }));
    t.notThrows(referenceVerify(offset));
  }
  for (const offset of [-301, 301]) {
    const ts = now + offset;
    const signature = new Webhook(secret).sign(id, new Date(ts * 1000), body);
    await t.throwsAsync(Valise.webhooks.verify(body, headersAt(ts, signature), secret, { now: now * 1000 }), {
      message: /timestamp too (old|new)/,
    });
    t.throws(referenceVerify(offset), { message: /timestamp too (old|new)/ });
  }
});

test('a signed empty body is refused with a WebhookVerificationError saying so, not a JSON parse error', async (t) => {
  const ts = nowSeconds();
  const signature = new Webhook(secret).sign(id, new Date(ts * 1000), '');
  for (const empty of ['', new Uint8Array(0)]) {
    const error = await t.throwsAsync(Valise.webhooks.verify(empty, headersAt(ts, signature), secret), {
      instanceOf: WebhookVerificationError,
      message: /^Signed payload is empty/,
    });
    t.is(error?.code, 'webhook_verification_failed');
  }
  // An empty body with another body's signature is still a bad signature.
  const other = new Webhook(secret).sign(id, new Date(ts * 1000), body);
  await t.throwsAsync(Valise.webhooks.verify('', headersAt(ts, other), secret), {
    instanceOf: WebhookVerificationError,
    message: /^No matching signature found$/,
  });
});

test('without `now` the clock at the call is the reference; `now` (a Date or milliseconds) replaces it', async (t) => {
  const signedAt = 1778751000;
  const headers = headersAt(signedAt, 'v1,kJ6JK9020ZEJOmPPf+DLQ2rsQyjd3KFVsEhGQRdKyb8=');
  // Signed in May 2026: by today's clock it is stale, at its own time it passes, either way of saying it.
  await t.throwsAsync(Valise.webhooks.verify(body, headers, secret), { message: /^Message timestamp too old$/ });
  await t.notThrowsAsync(Valise.webhooks.verify(body, headers, secret, { now: new Date(signedAt * 1000) }));
  await t.notThrowsAsync(Valise.webhooks.verify(body, headers, secret, { now: (signedAt + 300) * 1000 }));
  await t.throwsAsync(Valise.webhooks.verify(body, headers, secret, { now: (signedAt + 301) * 1000 }), {
    message: /^Message timestamp too old$/,
  });
  // A receiver that queues deliveries can widen the window for the time they wait.
  await t.notThrowsAsync(
    Valise.webhooks.verify(body, headers, secret, { now: (signedAt + 3600) * 1000, toleranceSeconds: 3600 }),
  );
});
