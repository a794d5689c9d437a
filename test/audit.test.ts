import test from 'ava';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Audited');
});
test.after.always(() => api.close());

const restricted = (name: string) => ({ name, key_type: 'restricted', scopes: ['transfers:read'] });

test('every mutating request writes an audit entry, successful or failed', async (t) => {
  const created = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: restricted('audit me'),
    headers: { 'user-agent': 'audit-test/1.0' },
  });
  await api.call('PATCH', `/v1/api-keys/${created.body.id}`, { key: ws.keys.live, body: { name: 'renamed' } });
  await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: { name: 'no mfa' } });
  const log = await api.call('GET', '/v1/audit?limit=50', { key: ws.keys.live });
  t.is(log.status, 200);
  const me = (await api.call('GET', '/v1/me', { key: ws.keys.live })).body;

  const create = log.body.data.find((e: any) => e.action === 'api_key.create' && e.resource_id === created.body.id);
  t.truthy(create);
  t.is(create.status, 'success');
  t.is(create.resource_type, 'api_key');
  t.is(create.actor_id, ws.user_id);
  t.is(create.api_key_id, me.api_key.id);
  t.is(create.workspace_id, ws.workspace_id);
  t.is(create.user_agent, 'audit-test/1.0');
  t.is(create.ip_address, '127.0.0.1');
  t.regex(create.request_id, /^req_/);
  t.is(create.object, 'audit_entry');

  t.truthy(log.body.data.find((e: any) => e.action === 'api_key.update' && e.resource_id === created.body.id));
  const refused = log.body.data.find((e: any) => e.action === 'api_key.create' && e.status === 'failure');
  t.is(refused.metadata.error_code, 'mfa_required');
  t.false(log.text.includes(created.body.key), 'key values never reach the audit log');
  t.false(log.text.includes('mfa_code'));
});

test('reads are not audited', async (t) => {
  const own = await api.workspace('Quiet');
  await api.call('GET', '/v1/me', { key: own.keys.live });
  await api.call('GET', '/v1/api-keys', { key: own.keys.live });
  const log = await api.call('GET', '/v1/audit', { key: own.keys.live });
  t.deepEqual(log.body.data, []);
  t.false(log.body.has_more);
});

test('filters: action, actor_id, resource_type, since and until', async (t) => {
  const own = await api.workspace('Filtered');
  const before = new Date();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const a = await api.call('POST', '/v1/api-keys', { key: own.keys.live, body: restricted('a') });
  await api.call('DELETE', `/v1/api-keys/${a.body.id}`, { key: own.keys.live });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const middle = new Date();
  await new Promise((resolve) => setTimeout(resolve, 20));
  await api.call('POST', '/v1/api-keys', { key: own.keys.live, body: restricted('b') });

  const get = async (query: string) => (await api.call('GET', `/v1/audit?${query}`, { key: own.keys.live })).body;
  t.deepEqual(
    (await get('action=api_key.revoke')).data.map((e: any) => e.resource_id),
    [a.body.id],
  );
  t.is((await get('action=api_key.create')).data.length, 2);
  t.is((await get(`actor_id=${own.user_id}`)).data.length, 3);
  t.is((await get('actor_id=00000000-0000-4000-8000-000000000000')).data.length, 0);
  t.is((await get('resource_type=api_key')).data.length, 3);
  t.is((await get('resource_type=transfer')).data.length, 0);
  t.is((await get(`since=${before.toISOString()}&until=${middle.toISOString()}`)).data.length, 2);
  t.is((await get(`since=${middle.toISOString()}`)).data.length, 1);
  const newestFirst = (await get('limit=10')).data.map((e: any) => e.action);
  t.deepEqual(newestFirst, ['api_key.create', 'api_key.revoke', 'api_key.create']);
});

test('limit: up to 500 for the audit log, clamped beyond', async (t) => {
  const response = await api.call('GET', '/v1/audit?limit=5000', { key: ws.keys.live });
  t.is(response.body.limit, 500);
  const small = await api.call('GET', '/v1/audit?limit=250', { key: ws.keys.live });
  t.is(small.body.limit, 250);
});

test('the audit log needs audit:read', async (t) => {
  const reader = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: restricted('no audit') });
  const denied = await api.call('GET', '/v1/audit', { key: reader.body.key });
  t.is(denied.status, 403);
  t.is(denied.body.error.code, 'scope_missing');
});
