import test from 'ava';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Keys');
});
test.after.always(() => api.close());

const events = (type: string, environment: 'live' | 'test' | 'sandbox' = 'live') =>
  createEventQueries(api.services.db).listByType({ workspaceId: ws.workspace_id, environment }, type);

test('creating a full key without mfa_code gives 401 mfa_required naming the sensitive scopes', async (t) => {
  const response = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: { name: 'no mfa' } });
  t.is(response.status, 401);
  t.is(response.body.error.code, 'mfa_required');
  t.is(response.body.error.param, 'mfa_code');
  t.true(response.body.error.sensitive_scopes.includes('api_keys:manage'));
  t.true(response.body.error.sensitive_scopes.includes('gdpr:export'));
  t.regex(response.body.error.message, /api_keys:manage/);
});

test('a wrong mfa_code gives 401 mfa_required; resending with a valid code creates the key', async (t) => {
  const ws = await api.workspace('Keys: wrong code');
  const body = { name: 'restricted sensitive', key_type: 'restricted', scopes: ['transfers:read', 'gdpr:export'] };
  const wrong = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: { ...body, mfa_code: '000000' } });
  t.is(wrong.status, 401);
  t.is(wrong.body.error.code, 'mfa_required');
  t.deepEqual(wrong.body.error.sensitive_scopes, ['gdpr:export']);
  const right = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: { ...body, mfa_code: ws.mfa() } });
  t.is(right.status, 201);
  t.deepEqual(right.body.scopes, ['transfers:read', 'gdpr:export']);
});

test('five wrong codes in a quarter hour lock MFA for that user and environment, a right code included, with 429 and Retry-After', async (t) => {
  const own = await api.workspace('MFA lock');
  const other = await api.workspace('MFA lock (other)');
  const body = { name: 'guessed', key_type: 'restricted', scopes: ['gdpr:export'] };
  const attempt = (workspace: typeof own, mfa_code: string) =>
    api.call('POST', '/v1/api-keys', { key: workspace.keys.live, body: { ...body, mfa_code } });

  // A right code clears the count: four wrong, one right, four wrong is never locked.
  for (let i = 0; i < 4; i++) t.is((await attempt(own, '000000')).status, 401);
  t.is((await attempt(own, own.mfa())).status, 201);
  for (let i = 0; i < 4; i++) t.is((await attempt(own, '111111')).status, 401);
  t.is((await attempt(own, '222222')).status, 401, 'the fifth wrong code since the last right one');

  const locked = await attempt(own, own.mfa());
  t.is(locked.status, 429);
  t.is(locked.body.error.code, 'rate_limited');
  t.is(locked.body.error.param, 'mfa_code');
  const retryAfter = Number(locked.headers.get('retry-after'));
  t.true(retryAfter > 800 && retryAfter <= 900, `Retry-After ${retryAfter}`);
  // A missing code is told about the lock too. The lock is the user's in that environment: the test key is not
  // locked (asked without a code, it gets mfa_required, not 429).
  t.is((await api.call('POST', '/v1/api-keys', { key: own.keys.live, body })).status, 429);
  const fromTest = await api.call('POST', '/v1/api-keys', { key: own.keys.test, body });
  t.is(fromTest.status, 401, fromTest.text);
  t.is(fromTest.body.error.code, 'mfa_required');
  // Keys without sensitive scopes need no code and are not locked; other users are not either.
  const plain = await api.call('POST', '/v1/api-keys', {
    key: own.keys.live,
    body: { name: 'plain', key_type: 'restricted', scopes: ['transfers:read'] },
  });
  t.is(plain.status, 201);
  t.is((await attempt(other, other.mfa())).status, 201);
});

test('a restricted key without sensitive scopes needs no MFA and defaults to transfers:read/write', async (t) => {
  const response = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'defaults', key_type: 'restricted' },
  });
  t.is(response.status, 201);
  t.deepEqual(response.body.scopes, ['transfers:read', 'transfers:write']);
  t.is(response.body.environment, 'live');
  t.is(response.body.key_type, 'restricted');
  t.is(response.body.used_count, 0);
  t.is(response.body.revoked_at, null);
  t.regex(response.body.warning, /only time/);
});

test('scopes sent without key_type make a restricted key, as a client following the spec sends them', async (t) => {
  const ws = await api.workspace('Keys: implied type');
  const restricted = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'spec client', scopes: ['transfers:read'] },
  });
  t.is(restricted.status, 201, restricted.text);
  t.is(restricted.body.key_type, 'restricted');
  t.deepEqual(restricted.body.scopes, ['transfers:read']);
  t.regex(restricted.body.key, /^svc_rk_live_/);
  // The key holds what it was given and nothing more.
  t.is((await api.call('GET', '/v1/transfers', { key: restricted.body.key })).status, 200);
  const write = await api.call('POST', '/v1/transfers', {
    key: restricted.body.key,
    body: { files: [{ name: 'a.txt', size: 1, mime_type: 'text/plain' }] },
  });
  t.is(write.status, 403);
  t.is(write.body.error.code, 'scope_missing');

  // Without scopes, or with the full key's own ["*"], the spec's default stays: a full key, which needs MFA.
  for (const body of [{ name: 'default' }, { name: 'wildcard', scopes: ['*'] }]) {
    const full = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: { ...body, mfa_code: ws.mfa() } });
    t.is(full.status, 201, full.text);
    t.is(full.body.key_type, 'full');
    t.deepEqual(full.body.scopes, ['*']);
  }
  // An explicit full key with a scope list is still refused: the caller said two things that disagree.
  const both = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'both', key_type: 'full', scopes: ['transfers:read'] },
  });
  t.is(both.status, 400);
  t.is(both.body.error.param, 'scopes');
});

test('the full key value is returned once and never listed or fetched again', async (t) => {
  const created = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'secret', key_type: 'restricted', scopes: ['transfers:read'] },
  });
  const value: string = created.body.key;
  const list = await api.call('GET', '/v1/api-keys?limit=100', { key: ws.keys.live });
  const fetched = await api.call('GET', `/v1/api-keys/${created.body.id}`, { key: ws.keys.live });
  t.false(list.text.includes(value));
  t.false(fetched.text.includes(value));
  t.false('key' in fetched.body);
  t.is(fetched.body.key_prefix, created.body.key_prefix);
  t.true(list.body.data.some((k: { id: string }) => k.id === created.body.id));
});

test('a key cannot mint a key stronger than itself', async (t) => {
  const ws = await api.workspace('Keys: no escalation');
  const manager = {
    body: await ws.mintKey({ name: 'manager', key_type: 'restricted', scopes: ['api_keys:manage', 'transfers:read'] }),
  };
  const full = await api.call('POST', '/v1/api-keys', {
    key: manager.body.key,
    body: { name: 'escalate', mfa_code: ws.mfa() },
  });
  t.is(full.status, 403);
  t.is(full.body.error.code, 'scope_missing');
  const wider = await api.call('POST', '/v1/api-keys', {
    key: manager.body.key,
    body: { name: 'wider', key_type: 'restricted', scopes: ['transfers:write'] },
  });
  t.is(wider.status, 403);
  const same = await api.call('POST', '/v1/api-keys', {
    key: manager.body.key,
    body: { name: 'narrower', key_type: 'restricted', scopes: ['transfers:read'] },
  });
  t.is(same.status, 201);
  const rotateSelf = await api.call('POST', `/v1/api-keys/${manager.body.id}/rotate`, {
    key: manager.body.key,
    body: { mfa_code: ws.mfa() },
  });
  t.is(rotateSelf.status, 200, 'a key may rotate itself');
});

test('creation validates its body: names, scopes, environments and IPs', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{}, 'name'],
    [{ name: '   ' }, 'name'],
    [{ name: 'x', key_type: 'restricted', scopes: [] }, 'scopes'],
    [{ name: 'x', key_type: 'restricted', scopes: ['transfers:fly'] }, 'scopes.0'],
    [{ name: 'x', key_type: 'full', scopes: ['transfers:read'] }, 'scopes'],
    [{ name: 'x', environment: 'prod' }, 'environment'],
    [{ name: 'x', allowed_ips: ['not-an-ip'] }, 'allowed_ips.0'],
    [{ name: 'x', expires_in_days: -1 }, 'expires_in_days'],
    [{ name: 'x', max_uses: 0 }, 'max_uses'],
  ];
  // Validation comes before MFA: the code is never checked, so one serves every case.
  const mfa_code = ws.mfa();
  for (const [body, param] of cases) {
    const response = await api.call('POST', '/v1/api-keys', {
      key: ws.keys.live,
      body: { mfa_code, ...body },
    });
    t.is(response.status, 400, `${JSON.stringify(body)} → ${response.text}`);
    t.is(response.body.error.code, 'validation_error');
    t.is(response.body.error.param, param, JSON.stringify(body));
  }
});

test('PATCH edits name, description, allowed_ips, scopes and max_uses without changing the value', async (t) => {
  const created = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'editable', key_type: 'restricted', scopes: ['transfers:read'] },
  });
  const patched = await api.call('PATCH', `/v1/api-keys/${created.body.id}`, {
    key: ws.keys.live,
    body: {
      name: 'édité ✓',
      description: 'for the nightly job',
      allowed_ips: ['127.0.0.1'],
      scopes: ['transfers:read', 'transfers:write'],
      max_uses: 100,
    },
  });
  t.is(patched.status, 200, patched.text);
  t.is(patched.body.name, 'édité ✓');
  t.is(patched.body.description, 'for the nightly job');
  t.deepEqual(patched.body.allowed_ips, ['127.0.0.1']);
  t.deepEqual(patched.body.scopes, ['transfers:read', 'transfers:write']);
  t.is(patched.body.max_uses, 100);
  t.is(patched.body.key_prefix, created.body.key_prefix);
  t.is((await api.call('GET', '/v1/me', { key: created.body.key })).status, 200);

  const empty = await api.call('PATCH', `/v1/api-keys/${created.body.id}`, { key: ws.keys.live, body: { scopes: [] } });
  t.is(empty.status, 400);
  t.is(empty.body.error.param, 'scopes');
  const sensitive = await api.call('PATCH', `/v1/api-keys/${created.body.id}`, {
    key: ws.keys.live,
    body: { scopes: ['transfers:read', 'audit:export'] },
  });
  t.is(sensitive.status, 401);
  t.is(sensitive.body.error.code, 'mfa_required');
  const self = (await api.call('GET', '/v1/me', { key: ws.keys.live })).body;
  const fullScopes = await api.call('PATCH', `/v1/api-keys/${self.api_key.id}`, {
    key: ws.keys.live,
    body: { scopes: ['transfers:read'] },
  });
  t.is(fullScopes.status, 400, 'a full key cannot be narrowed by PATCH');
});

test('DELETE revokes with a reason, fires api_key.revoked once, and is repeatable', async (t) => {
  const created = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'revocable', key_type: 'restricted', scopes: ['transfers:read'] },
  });
  const first = await api.call('DELETE', `/v1/api-keys/${created.body.id}`, {
    key: ws.keys.live,
    body: { reason: 'suspicious_activity' },
  });
  t.is(first.status, 200);
  t.true(first.body.revoked);
  t.is(first.body.revocation_reason, 'suspicious_activity');
  t.truthy(first.body.revoked_at);
  t.false(first.body.is_active);
  const again = await api.call('DELETE', `/v1/api-keys/${created.body.id}`, { key: ws.keys.live });
  t.is(again.status, 200);
  t.is(again.body.revocation_reason, 'suspicious_activity');
  const fired = (await events('api_key.revoked')).filter(
    (e) => (e.data.api_key as { id: string }).id === created.body.id,
  );
  t.is(fired.length, 1);
  t.is(fired[0]?.data.reason, 'suspicious_activity');
  t.false(JSON.stringify(fired[0]?.data).includes(created.body.key));
  const bad = await api.call('DELETE', `/v1/api-keys/${created.body.id}`, {
    key: ws.keys.live,
    body: { reason: 'bored' },
  });
  t.is(bad.status, 400);
  const revive = await api.call('PATCH', `/v1/api-keys/${created.body.id}`, {
    key: ws.keys.live,
    body: { is_active: true },
  });
  t.is(revive.status, 400, 'a revoked key stays revoked');
});

test('rotation returns a new value once; the old value works through the grace period, then stops', async (t) => {
  const created = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'rotating', key_type: 'restricted', scopes: ['transfers:read'] },
  });
  const rotated = await api.call('POST', `/v1/api-keys/${created.body.id}/rotate`, {
    key: ws.keys.live,
    body: { grace_period_hours: 2 / 3600 },
  });
  t.is(rotated.status, 200, rotated.text);
  t.is(rotated.body.id, created.body.id);
  t.not(rotated.body.key, created.body.key);
  t.regex(rotated.body.key, /^svc_rk_live_/);
  t.true(rotated.body.key.startsWith(rotated.body.key_prefix));
  t.truthy(rotated.body.previous_key_valid_until);
  t.is((await api.call('GET', '/v1/me', { key: created.body.key })).status, 200, 'old value inside the grace period');
  t.is((await api.call('GET', '/v1/me', { key: rotated.body.key })).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 2_200));
  const old = await api.call('GET', '/v1/me', { key: created.body.key });
  t.is(old.status, 401);
  t.is(old.body.error.code, 'expired_api_key');
  t.is((await api.call('GET', '/v1/me', { key: rotated.body.key })).status, 200);
  t.is(
    (await events('api_key.rotated')).filter((e) => (e.data.api_key as { id: string }).id === created.body.id).length,
    1,
  );
  await eventually(async () => {
    const audit = await api.call('GET', '/v1/audit?action=api_key.rotation_grace_ended', { key: ws.keys.live });
    return audit.body.data.find((e: { resource_id: string }) => e.resource_id === created.body.id);
  });
  t.pass();
});

test('rotation with no grace stops the old value at once; rotating a full key needs MFA', async (t) => {
  const ws = await api.workspace('Keys: rotate full');
  const created = { body: await ws.mintKey({ name: 'full to rotate' }) };
  const withoutMfa = await api.call('POST', `/v1/api-keys/${created.body.id}/rotate`, { key: ws.keys.live });
  t.is(withoutMfa.status, 401);
  t.is(withoutMfa.body.error.code, 'mfa_required');
  const rotated = await api.call('POST', `/v1/api-keys/${created.body.id}/rotate`, {
    key: ws.keys.live,
    body: { grace_period_hours: 0, mfa_code: ws.mfa() },
  });
  t.is(rotated.status, 200);
  t.is((await api.call('GET', '/v1/me', { key: created.body.key })).body.error.code, 'expired_api_key');
  t.is((await api.call('GET', '/v1/me', { key: rotated.body.key })).status, 200);
});

test('creating a key records api_key.created without the key value', async (t) => {
  const created = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'evented', key_type: 'restricted', scopes: ['transfers:read'] },
  });
  const fired = (await events('api_key.created')).find(
    (e) => (e.data.api_key as { id: string }).id === created.body.id,
  );
  t.truthy(fired);
  t.regex(fired?.id ?? '', /^evt_/);
  t.false(JSON.stringify(fired?.data).includes(created.body.key));
});
