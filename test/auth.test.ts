import test from 'ava';
import { eventually, type MintKeyBody, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Auth');
});
test.after.always(() => api.close());

/** A key of the workspace owner's, minted through the domain layer (creation and MFA: api-keys*.test.ts). */
async function createKey(body: MintKeyBody, environment: 'live' | 'test' | 'sandbox' = 'live') {
  return ws.mintKey(body, environment);
}

function assertError(
  t: import('ava').ExecutionContext,
  response: { status: number; body: any },
  status: number,
  code: string,
) {
  t.is(response.status, status, JSON.stringify(response.body));
  t.is(response.body?.error?.code, code);
  t.is(typeof response.body.error.message, 'string');
  t.regex(response.body.error.request_id, /^req_/);
}

test('no Authorization header gives 401 missing_api_key', async (t) => {
  assertError(t, await api.call('GET', '/v1/me'), 401, 'missing_api_key');
});

test('malformed, non-Bearer and unknown keys give 401 invalid_api_key', async (t) => {
  const unknown = `svc_live_${'A'.repeat(40)}`;
  for (const header of [
    'Basic abc',
    'Bearer',
    'Bearer nope',
    `Bearer ${unknown}`,
    `Bearer svc_live_short`,
    `Bearer svc_rk_sandbox_${'a'.repeat(40)}`,
  ]) {
    assertError(t, await api.call('GET', '/v1/me', { headers: { authorization: header } }), 401, 'invalid_api_key');
  }
});

test('a key whose environment prefix was altered is invalid (wrong environment)', async (t) => {
  const forged = ws.keys.live.replace('svc_live_', 'svc_test_');
  assertError(t, await api.call('GET', '/v1/me', { key: forged }), 401, 'invalid_api_key');
});

test('every key type carries its documented prefix and authenticates', async (t) => {
  t.regex(ws.keys.live, /^svc_live_[0-9A-Za-z]{40}$/);
  t.regex(ws.keys.test, /^svc_test_[0-9A-Za-z]{40}$/);
  t.regex(ws.keys.sandbox, /^svc_sandbox_[0-9A-Za-z]{40}$/);
  const restrictedLive = await createKey({ name: 'rk live', key_type: 'restricted', scopes: ['transfers:read'] });
  const restrictedTest = await createKey(
    { name: 'rk test', key_type: 'restricted', scopes: ['transfers:read'] },
    'test',
  );
  const restrictedSandbox = await createKey(
    { name: 'rk sandbox', key_type: 'restricted', scopes: ['transfers:read'] },
    'sandbox',
  );
  const fullTest = await createKey({ name: 'full test' }, 'test');
  t.regex(restrictedLive.key, /^svc_rk_live_/);
  t.regex(restrictedTest.key, /^svc_rk_test_/);
  t.regex(restrictedSandbox.key, /^svc_sandbox_/);
  t.regex(fullTest.key, /^svc_test_/);
  t.true(restrictedLive.key.startsWith(restrictedLive.key_prefix));
  for (const [key, environment] of [
    [restrictedLive.key, 'live'],
    [restrictedTest.key, 'test'],
    [restrictedSandbox.key, 'sandbox'],
    [fullTest.key, 'test'],
  ] as const) {
    const me = await api.call('GET', '/v1/me', { key });
    t.is(me.status, 200);
    t.is(me.body.environment, environment);
  }
});

test('a restricted key lacking the route scope gets 403 scope_missing; a full key passes', async (t) => {
  const restricted = await createKey({ name: 'reader', key_type: 'restricted', scopes: ['transfers:read'] });
  const denied = await api.call('GET', '/v1/api-keys', { key: restricted.key });
  assertError(t, denied, 403, 'scope_missing');
  t.is(denied.body.error.required_scope, 'api_keys:manage');
  t.is((await api.call('GET', '/v1/api-keys', { key: ws.keys.live })).status, 200);
});

test('the `*` wildcard scope satisfies any route scope', async (t) => {
  const wildcard = await createKey({ name: 'wild', key_type: 'restricted', scopes: ['*'] });
  t.is((await api.call('GET', '/v1/api-keys', { key: wildcard.key })).status, 200);
  t.is((await api.call('GET', '/v1/audit', { key: wildcard.key })).status, 200);
});

test('a revoked key gives 401 revoked_api_key at once', async (t) => {
  const created = await createKey({ name: 'to revoke' });
  t.is((await api.call('GET', '/v1/me', { key: created.key })).status, 200);
  const revoked = await api.call('DELETE', `/v1/api-keys/${created.id}`, {
    key: ws.keys.live,
    body: { reason: 'compromised' },
  });
  t.is(revoked.status, 200);
  assertError(t, await api.call('GET', '/v1/me', { key: created.key }), 401, 'revoked_api_key');
});

test('an inactive key gives 401 revoked_api_key and works again once reactivated', async (t) => {
  const created = await createKey({ name: 'toggle' });
  await api.call('PATCH', `/v1/api-keys/${created.id}`, { key: ws.keys.live, body: { is_active: false } });
  assertError(t, await api.call('GET', '/v1/me', { key: created.key }), 401, 'revoked_api_key');
  await api.call('PATCH', `/v1/api-keys/${created.id}`, { key: ws.keys.live, body: { is_active: true } });
  t.is((await api.call('GET', '/v1/me', { key: created.key })).status, 200);
});

test('an expired key gives 401 expired_api_key, and the expiry workflow records api_key.expired', async (t) => {
  // Eight seconds: time enough to be used once on a loaded machine (two seconds were not, once).
  const created = await createKey({ name: 'short-lived', expires_in_days: 8 / 86_400 });
  t.is((await api.call('GET', '/v1/me', { key: created.key })).status, 200);
  const expiresAt = new Date(created.expires_at ?? 0).getTime();
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 200));
  assertError(t, await api.call('GET', '/v1/me', { key: created.key }), 401, 'expired_api_key');
  const audit = await eventually(async () => {
    const entries = await api.call('GET', `/v1/audit?action=api_key.expired`, { key: ws.keys.live });
    return entries.body.data.find((e: { resource_id: string }) => e.resource_id === created.id);
  });
  t.is(audit.status, 'success');
  t.is(audit.actor_id, null);
});

test('a caller outside the allow-list gets 403 ip_not_allowed; inside it passes', async (t) => {
  const outside = await createKey({ name: 'office only', allowed_ips: ['203.0.113.0/24'] });
  assertError(t, await api.call('GET', '/v1/me', { key: outside.key }), 403, 'ip_not_allowed');
  const inside = await createKey({ name: 'loopback', allowed_ips: ['127.0.0.1', '::1'] });
  t.is((await api.call('GET', '/v1/me', { key: inside.key })).status, 200);
  const cidr = await createKey({ name: 'loopback range', allowed_ips: ['127.0.0.0/8'] });
  t.is((await api.call('GET', '/v1/me', { key: cidr.key })).status, 200);
});

test('a key past its usage cap gets 429 rate_limited with Retry-After; used_count and last_used_at are kept', async (t) => {
  const capped = await createKey({ name: 'three uses', max_uses: 3 });
  for (let i = 0; i < 3; i++) t.is((await api.call('GET', '/v1/me', { key: capped.key })).status, 200);
  const refused = await api.call('GET', '/v1/me', { key: capped.key });
  assertError(t, refused, 429, 'rate_limited');
  t.truthy(Number(refused.headers.get('retry-after')) > 0);
  const shown = await api.call('GET', `/v1/api-keys/${capped.id}`, { key: ws.keys.live });
  t.is(shown.body.used_count, 3);
  t.truthy(shown.body.last_used_at);
  const raised = await api.call('PATCH', `/v1/api-keys/${capped.id}`, { key: ws.keys.live, body: { max_uses: 10 } });
  t.is(raised.status, 200);
  t.is((await api.call('GET', '/v1/me', { key: capped.key })).status, 200);
});

test('concurrent requests never exceed the usage cap', async (t) => {
  const capped = await createKey({ name: 'five uses', max_uses: 5 });
  const statuses = await Promise.all(
    Array.from({ length: 20 }, () => api.call('GET', '/v1/me', { key: capped.key }).then((r) => r.status)),
  );
  t.is(statuses.filter((s) => s === 200).length, 5);
  t.is(statuses.filter((s) => s === 429).length, 15);
});

test('authentication failures on a known key are written to the audit log', async (t) => {
  const created = await createKey({ name: 'audited' });
  await api.call('DELETE', `/v1/api-keys/${created.id}`, { key: ws.keys.live });
  await api.call('GET', '/v1/me', { key: created.key, headers: { 'user-agent': 'auth-audit-test' } });
  const entries = await api.call('GET', `/v1/audit?action=auth.failed&resource_type=api_key`, { key: ws.keys.live });
  const entry = entries.body.data.find((e: { resource_id: string }) => e.resource_id === created.id);
  t.truthy(entry);
  t.is(entry.status, 'failure');
  t.is(entry.metadata.reason, 'revoked');
  t.is(entry.user_agent, 'auth-audit-test');
  t.is(entry.ip_address, '127.0.0.1');
});

test('uses of an uncapped key are counted too, within about a second', async (t) => {
  const created = await createKey({ name: 'uncapped' });
  for (let i = 0; i < 4; i++) await api.call('GET', '/v1/me', { key: created.key });
  const counted = await eventually(async () => {
    const shown = await api.call('GET', `/v1/api-keys/${created.id}`, { key: ws.keys.live });
    return shown.body.used_count === 4 ? shown.body : undefined;
  }, 5_000);
  t.truthy(counted.last_used_at);
});
