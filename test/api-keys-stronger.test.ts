import test from 'ava';
import { widensAllowList } from '../lib/api-keys/loosening.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

// A key with api_keys:manage cannot loosen or rotate a key stronger than itself without MFA
// (docs/api-keys.md, "Stronger keys"). Each test has a workspace of its own (codes are per user).

let api: TestApi;
test.before(async () => {
  api = await startApi();
});
test.after.always(() => api.close());

/** A restricted manager, weaker than a full key and than any key holding a scope it lacks. */
async function managerOf(ws: TestWorkspace) {
  return ws.mintKey({ name: 'manager', key_type: 'restricted', scopes: ['api_keys:manage', 'transfers:read'] });
}

const patch = (key: string, id: string, body: Record<string, unknown>) =>
  api.call('PATCH', `/v1/api-keys/${id}`, { key, body });

function refusedForMfa(t: import('ava').ExecutionContext, response: { status: number; body: any; text: string }) {
  t.is(response.status, 401, response.text);
  t.is(response.body.error.code, 'mfa_required');
  t.is(response.body.error.param, 'mfa_code');
}

test('re-activating a stronger key needs a code; deactivating it does not', async (t) => {
  const ws = await api.workspace('Stronger: is_active');
  const manager = await managerOf(ws);
  const full = await ws.mintKey({ name: 'full' });
  t.is((await patch(manager.key, full.id, { is_active: false })).status, 200, 'tightening is free');
  refusedForMfa(t, await patch(manager.key, full.id, { is_active: true }));
  t.is((await api.call('GET', '/v1/me', { key: full.key })).body.error.code, 'revoked_api_key', 'still inactive');
  const reactivated = await patch(manager.key, full.id, { is_active: true, mfa_code: ws.mfa() });
  t.is(reactivated.status, 200, reactivated.text);
  t.true(reactivated.body.is_active);
  t.is((await api.call('GET', '/v1/me', { key: full.key })).status, 200);
});

test('clearing or widening a stronger key IP allow-list needs a code; narrowing it does not', async (t) => {
  const ws = await api.workspace('Stronger: allowed_ips');
  const manager = await managerOf(ws);
  const full = await ws.mintKey({ name: 'full', allowed_ips: ['127.0.0.0/8', '203.0.113.0/24'] });
  refusedForMfa(t, await patch(manager.key, full.id, { allowed_ips: [] }));
  refusedForMfa(t, await patch(manager.key, full.id, { allowed_ips: ['127.0.0.0/8', '198.51.100.7'] }));
  refusedForMfa(t, await patch(manager.key, full.id, { allowed_ips: ['0.0.0.0/0'] }));
  const narrowed = await patch(manager.key, full.id, { allowed_ips: ['127.0.0.1', '203.0.113.0/25'] });
  t.is(narrowed.status, 200, narrowed.text);
  t.deepEqual(narrowed.body.allowed_ips, ['127.0.0.1', '203.0.113.0/25']);
  const cleared = await patch(manager.key, full.id, { allowed_ips: [], mfa_code: ws.mfa() });
  t.is(cleared.status, 200, cleared.text);
  t.deepEqual(cleared.body.allowed_ips, []);
});

test('raising or lifting a stronger key max_uses needs a code; lowering it does not', async (t) => {
  const ws = await api.workspace('Stronger: max_uses');
  const manager = await managerOf(ws);
  const full = await ws.mintKey({ name: 'full', max_uses: 10 });
  refusedForMfa(t, await patch(manager.key, full.id, { max_uses: 11 }));
  refusedForMfa(t, await patch(manager.key, full.id, { max_uses: null }));
  const lowered = await patch(manager.key, full.id, { max_uses: 5 });
  t.is(lowered.status, 200, lowered.text);
  t.is(lowered.body.max_uses, 5);
  const lifted = await patch(manager.key, full.id, { max_uses: null, mfa_code: ws.mfa() });
  t.is(lifted.status, 200, lifted.text);
  t.is(lifted.body.max_uses, null);
});

test('adding scopes to a stronger restricted key needs a code; scopes the caller lacks stay refused', async (t) => {
  const ws = await api.workspace('Stronger: scopes');
  const manager = await managerOf(ws);
  // Stronger: it holds webhooks:read, which the manager lacks.
  const hooks = await ws.mintKey({ name: 'hooks', key_type: 'restricted', scopes: ['webhooks:read'] });
  refusedForMfa(t, await patch(manager.key, hooks.id, { scopes: ['webhooks:read', 'transfers:read'] }));
  const beyond = await patch(manager.key, hooks.id, { scopes: ['webhooks:read', 'webhooks:manage'], mfa_code: '1' });
  t.is(beyond.status, 403, beyond.text);
  t.is(beyond.body.error.code, 'scope_missing');
  const added = await patch(manager.key, hooks.id, { scopes: ['webhooks:read', 'transfers:read'], mfa_code: ws.mfa() });
  t.is(added.status, 200, added.text);
  t.deepEqual(added.body.scopes, ['webhooks:read', 'transfers:read']);
  const narrowed = await patch(manager.key, hooks.id, { scopes: ['webhooks:read'] });
  t.is(narrowed.status, 200, narrowed.text);
});

test('a manager loosens a key no stronger than itself without a code', async (t) => {
  const ws = await api.workspace('Stronger: weaker target');
  const manager = await managerOf(ws);
  const reader = await ws.mintKey({
    name: 'reader',
    key_type: 'restricted',
    scopes: ['transfers:read'],
    allowed_ips: ['203.0.113.0/24'],
    max_uses: 3,
  });
  t.is((await patch(manager.key, reader.id, { is_active: false })).status, 200);
  const loosened = await patch(manager.key, reader.id, { is_active: true, allowed_ips: [], max_uses: null });
  t.is(loosened.status, 200, loosened.text);
  t.true(loosened.body.is_active);
  // The workspace's full key is weaker than nothing: it loosens anything without a code.
  const full = await ws.mintKey({ name: 'full', max_uses: 2 });
  t.is((await patch(ws.keys.live, full.id, { max_uses: null })).status, 200);
});

test('rotating a stronger key is refused with or without a code: the caller would receive its value', async (t) => {
  const ws = await api.workspace('Stronger: rotate');
  const manager = await managerOf(ws);
  const full = await ws.mintKey({ name: 'full' });
  const hooks = await ws.mintKey({ name: 'hooks', key_type: 'restricted', scopes: ['webhooks:read'] });
  for (const target of [full, hooks]) {
    for (const body of [{}, { mfa_code: ws.mfa() }]) {
      const rotated = await api.call('POST', `/v1/api-keys/${target.id}/rotate`, { key: manager.key, body });
      t.is(rotated.status, 403, rotated.text);
      t.is(rotated.body.error.code, 'scope_missing');
      t.false('key' in (rotated.body ?? {}));
    }
    t.is((await api.call('GET', '/v1/me', { key: target.key })).status, 200, 'the old value still works');
  }
});

test('an allow-list is widened by clearing it or by any entry outside every current entry', (t) => {
  const current = ['127.0.0.0/8', '203.0.113.0/24', '2001:db8::/32'];
  for (const narrower of [
    ['127.0.0.1'],
    ['203.0.113.200/25'],
    ['2001:db8:1::/48', '2001:db8::1'],
    ['127.0.0.0/8', '203.0.113.0/24'],
  ]) {
    t.false(widensAllowList(current, narrower), narrower.join(' '));
  }
  for (const wider of [[], ['0.0.0.0/0'], ['127.0.0.1', '198.51.100.7'], ['203.0.0.0/16'], ['2001:db9::1'], ['::1']]) {
    t.true(widensAllowList(current, wider), wider.join(' '));
  }
  t.false(widensAllowList([], ['127.0.0.1']), 'an empty list already lets every address in');
  t.true(widensAllowList(['::ffff:127.0.0.1'], ['127.0.0.1']), 'entries of another family are never inside');
});
