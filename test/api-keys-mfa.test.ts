import test from 'ava';
import { totpCode } from '../lib/crypto/totp.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

// MFA for sensitive grants (docs/api-keys.md, "MFA"): wrong codes counted atomically, per user and
// environment; each code accepted once (RFC 6238 section 5.2). Every test has a workspace (a user) of its own.

let api: TestApi;
test.before(async () => {
  api = await startApi();
});
test.after.always(() => api.close());

const sensitive = { name: 'sensitive', key_type: 'restricted', scopes: ['gdpr:export'] };
const attempt = (ws: TestWorkspace, mfa_code: string, key = ws.keys.live) =>
  api.call('POST', '/v1/api-keys', { key, body: { ...sensitive, mfa_code } });
const countOf = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

test('parallel wrong codes: exactly the limit is counted, the rest get 429, then a right code gets 429 too', async (t) => {
  const ws = await api.workspace('MFA parallel');
  const wrong = await Promise.all(Array.from({ length: 20 }, (_, i) => attempt(ws, String(100000 + i))));
  const statuses = wrong.map((r) => r.status);
  t.is(countOf(statuses, 401), 5, `statuses: ${statuses.join(' ')}`);
  t.is(countOf(statuses, 429), 15, `statuses: ${statuses.join(' ')}`);
  for (const response of wrong.filter((r) => r.status === 401)) t.is(response.body.error.code, 'mfa_required');
  for (const response of wrong.filter((r) => r.status === 429)) {
    t.is(response.body.error.code, 'rate_limited');
    t.regex(response.headers.get('retry-after') ?? '', /^\d+$/);
  }
  const right = await attempt(ws, ws.mfa());
  t.is(right.status, 429);
  t.is(right.body.error.code, 'rate_limited');
  t.is(right.body.error.param, 'mfa_code');
  const retryAfter = Number(right.headers.get('retry-after'));
  t.true(retryAfter > 800 && retryAfter <= 900, `Retry-After ${retryAfter}`);
});

test('a code is accepted once: the same code again gets 401 mfa_required, from any environment', async (t) => {
  const ws = await api.workspace('MFA replay');
  const code = ws.mfa();
  const first = await attempt(ws, code);
  t.is(first.status, 201, first.text);
  for (const key of [ws.keys.live, ws.keys.test]) {
    const again = await attempt(ws, code, key);
    t.is(again.status, 401, again.text);
    t.is(again.body.error.code, 'mfa_required');
    t.is(again.body.error.param, 'mfa_code');
    t.regex(again.body.error.message, /already been used/);
  }
  // The previous step's code (still inside the drift window) is older than the accepted one: refused too.
  const older = await attempt(ws, totpCode(ws.mfa_secret, Date.now() - 30_000));
  t.is(older.status, 401);
  t.is(older.body.error.code, 'mfa_required');
  // A later step is accepted.
  const later = await attempt(ws, ws.mfa());
  t.is(later.status, 201, later.text);
});

test('the same right code sent in parallel creates exactly one key', async (t) => {
  const ws = await api.workspace('MFA replay race');
  const code = ws.mfa();
  // Four, below the limit of five: attempts in flight count until the right one clears them.
  const responses = await Promise.all(Array.from({ length: 4 }, () => attempt(ws, code)));
  const statuses = responses.map((r) => r.status);
  t.is(countOf(statuses, 201), 1, `statuses: ${statuses.join(' ')}`);
  t.is(countOf(statuses, 401), 3, `statuses: ${statuses.join(' ')}`);
  const keys = (await api.call('GET', '/v1/api-keys?limit=100', { key: ws.keys.live })).body.data;
  t.is(keys.filter((k: { name: string }) => k.name === sensitive.name).length, 1);
});

test('wrong codes from a sandbox key lock the sandbox only: the live owner is not locked out', async (t) => {
  const ws = await api.workspace('MFA per environment');
  for (let i = 0; i < 5; i++) {
    const wrong = await attempt(ws, '000000', ws.keys.sandbox);
    t.is(wrong.status, 401, wrong.text);
  }
  const lockedSandbox = await attempt(ws, ws.mfa(), ws.keys.sandbox);
  t.is(lockedSandbox.status, 429);
  t.is(lockedSandbox.body.error.code, 'rate_limited');
  t.truthy(lockedSandbox.headers.get('retry-after'));
  const live = await attempt(ws, ws.mfa(), ws.keys.live);
  t.is(live.status, 201, live.text);
});
