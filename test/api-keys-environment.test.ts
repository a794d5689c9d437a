import test from 'ava';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { startApi, type TestApi } from './helpers/api.ts';
import { createTransfer } from './helpers/transfers.ts';

// POST /v1/api-keys `environment` (docs/api-keys.md, "Environments"): a live key mints live and test
// keys, a test key test keys, a sandbox key sandbox keys; never a live key from a test or sandbox key.

let api: TestApi;
test.before(async () => {
  api = await startApi();
});
test.after.always(() => api.close());

type Environment = 'live' | 'test' | 'sandbox';
const reader = (environment?: Environment) => ({
  name: `reader ${environment ?? 'default'}`,
  key_type: 'restricted',
  scopes: ['transfers:read'],
  ...(environment ? { environment } : {}),
});
const idsOf = (body: { data: Array<{ id: string }> }) => body.data.map((item) => item.id);

test('a live key mints a test key: svc_rk_test_ / svc_test_, environment test, seeing only test data', async (t) => {
  const ws = await api.workspace('Live mints test');
  const liveTransfer = await createTransfer(api, ws.keys.live, { files: [{ name: 'live.bin', size: 10 }] });
  const testTransfer = await createTransfer(api, ws.keys.test, { files: [{ name: 'test.bin', size: 10 }] });

  const restricted = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: reader('test') });
  t.is(restricted.status, 201, restricted.text);
  t.regex(restricted.body.key, /^svc_rk_test_/);
  t.is(restricted.body.environment, 'test');
  const full = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'full test', environment: 'test', mfa_code: ws.mfa() },
  });
  t.is(full.status, 201, full.text);
  t.regex(full.body.key, /^svc_test_/);
  t.is(full.body.environment, 'test');

  for (const key of [restricted.body.key, full.body.key]) {
    const list = await api.call('GET', '/v1/transfers?limit=100', { key });
    t.is(list.status, 200, list.text);
    t.deepEqual(idsOf(list.body), [testTransfer.transfer.id]);
    t.is((await api.call('GET', `/v1/transfers/${liveTransfer.transfer.id}`, { key })).status, 404);
    t.is((await api.call('GET', `/v1/transfers/${testTransfer.transfer.id}`, { key })).status, 200);
  }
  // The new keys are test keys: listed there, not among the live keys.
  const liveKeys = idsOf((await api.call('GET', '/v1/api-keys?limit=100', { key: ws.keys.live })).body);
  const testKeys = idsOf((await api.call('GET', '/v1/api-keys?limit=100', { key: ws.keys.test })).body);
  for (const id of [restricted.body.id, full.body.id]) {
    t.false(liveKeys.includes(id));
    t.true(testKeys.includes(id));
  }
  // The event concerns test data: it is a test event. The audit entry records the live caller's act: live.
  const events = createEventQueries(api.services.db);
  const createdIn = async (environment: Environment) =>
    (await events.listByType({ workspaceId: ws.workspace_id, environment }, 'api_key.created')).map(
      (e) => (e.data.api_key as { id: string }).id,
    );
  t.true((await createdIn('test')).includes(restricted.body.id));
  t.false((await createdIn('live')).includes(restricted.body.id));
  const auditOf = async (key: string) =>
    (await api.call('GET', '/v1/audit?action=api_key.create&limit=100', { key })).body.data.map(
      (e: { resource_id: string }) => e.resource_id,
    );
  t.true((await auditOf(ws.keys.live)).includes(restricted.body.id));
  t.false((await auditOf(ws.keys.test)).includes(restricted.body.id));
});

test('a test key mints test keys, by default too, and is refused a live or sandbox key with 403 forbidden', async (t) => {
  const ws = await api.workspace('Test mints');
  const byDefault = await api.call('POST', '/v1/api-keys', { key: ws.keys.test, body: reader() });
  t.is(byDefault.status, 201, byDefault.text);
  t.regex(byDefault.body.key, /^svc_rk_test_/);
  t.is(byDefault.body.environment, 'test');
  const explicit = await api.call('POST', '/v1/api-keys', { key: ws.keys.test, body: reader('test') });
  t.is(explicit.status, 201, explicit.text);
  t.is(explicit.body.environment, 'test');
  for (const environment of ['live', 'sandbox'] as const) {
    const refused = await api.call('POST', '/v1/api-keys', { key: ws.keys.test, body: reader(environment) });
    t.is(refused.status, 403, `${environment}: ${refused.text}`);
    t.is(refused.body.error.code, 'forbidden');
    t.is(refused.body.error.param, 'environment');
  }
  // Refused before MFA: a full live key asked with a valid code is refused the same way, the code unspent.
  const code = ws.mfa();
  const fullLive = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.test,
    body: { name: 'full live', environment: 'live', mfa_code: code },
  });
  t.is(fullLive.status, 403);
  t.is(fullLive.body.error.code, 'forbidden');
  const liveKeys = (await api.call('GET', '/v1/api-keys?limit=100', { key: ws.keys.live })).body.data;
  t.false(liveKeys.some((k: { name: string }) => k.name.startsWith('reader') || k.name === 'full live'));
  const fullTest = await api.call('POST', '/v1/api-keys', { key: ws.keys.test, body: { name: 'ok', mfa_code: code } });
  t.is(fullTest.status, 201, fullTest.text);
  t.regex(fullTest.body.key, /^svc_test_/);
});

test('a sandbox key mints sandbox keys only; a live key is refused a sandbox key', async (t) => {
  const ws = await api.workspace('Sandbox mints');
  const sandbox = await api.call('POST', '/v1/api-keys', { key: ws.keys.sandbox, body: reader() });
  t.is(sandbox.status, 201, sandbox.text);
  t.regex(sandbox.body.key, /^svc_sandbox_/);
  t.is(sandbox.body.environment, 'sandbox');
  t.is((await api.call('POST', '/v1/api-keys', { key: ws.keys.sandbox, body: reader('sandbox') })).status, 201);
  for (const environment of ['live', 'test'] as const) {
    const refused = await api.call('POST', '/v1/api-keys', { key: ws.keys.sandbox, body: reader(environment) });
    t.is(refused.status, 403, `${environment}: ${refused.text}`);
    t.is(refused.body.error.code, 'forbidden');
  }
  const fromLive = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: reader('sandbox') });
  t.is(fromLive.status, 403, fromLive.text);
  t.is(fromLive.body.error.code, 'forbidden');
  // A live key's default is live, as the spec says.
  const live = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: reader() });
  t.regex(live.body.key, /^svc_rk_live_/);
  t.is(live.body.environment, 'live');
});

test('a restricted live key minting a test key cannot grant scopes it lacks there either', async (t) => {
  const ws = await api.workspace('Live mints test, restricted');
  const manager = await ws.mintKey({ name: 'manager', key_type: 'restricted', scopes: ['api_keys:manage'] });
  const wider = await api.call('POST', '/v1/api-keys', { key: manager.key, body: reader('test') });
  t.is(wider.status, 403, wider.text);
  t.is(wider.body.error.code, 'scope_missing');
  const full = await api.call('POST', '/v1/api-keys', {
    key: manager.key,
    body: { name: 'full', environment: 'test', mfa_code: ws.mfa() },
  });
  t.is(full.status, 403, full.text);
  t.is(full.body.error.code, 'scope_missing');
});
