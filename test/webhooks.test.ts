import test from 'ava';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

let api: TestApi;
let ws: TestWorkspace;
let other: TestWorkspace;
test.before(async () => {
  // Production's guard: scripts/test.sh allows private targets for the delivery tests.
  api = await startApi({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
  ws = await api.workspace('Hooks');
  other = await api.workspace('Other hooks');
});
test.after.always(() => api.close());

const create = (key: string, body: Record<string, unknown>) => api.call('POST', '/v1/webhooks', { key, body });

test('creating a webhook returns its whsec_ secret once, with the default events', async (t) => {
  const created = await create(ws.keys.live, { url: 'https://hooks.example.com/valise' });
  t.is(created.status, 201, created.text);
  t.regex(created.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.deepEqual(created.body.events, ['transfer.downloaded']);
  t.true(created.body.is_active);
  t.is(created.body.success_count, 0);
  t.is(created.body.last_status, null);
  const list = await api.call('GET', '/v1/webhooks', { key: ws.keys.live });
  t.true(list.body.data.some((w: any) => w.id === created.body.id));
  t.false(list.text.includes(created.body.secret), 'the secret is never listed');
});

test('targets are checked: https only, no credentials, no private or metadata addresses, known events', async (t) => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ url: 'http://hooks.example.com/x' }, 'url'],
    [{ url: 'https://user:secret@hooks.example.com/x' }, 'url'],
    [{ url: 'https://127.0.0.1/x' }, 'url'],
    [{ url: 'https://10.0.0.8/x' }, 'url'],
    [{ url: 'https://169.254.169.254/latest/meta-data' }, 'url'],
    [{ url: 'https://[::1]/x' }, 'url'],
    [{ url: 'ftp://hooks.example.com/x' }, 'url'],
    [{ url: 'not a url' }, 'url'],
    [{ url: 'https://hooks.example.com/x', events: ['transfer.teleported'] }, 'events'],
    [{ url: 'https://hooks.example.com/x', events: [] }, 'events'],
  ];
  for (const [body, param] of cases) {
    const response = await create(ws.keys.live, body);
    t.is(response.status, 400, JSON.stringify(body));
    t.is(response.body.error.code, 'validation_error');
    t.is(response.body.error.param, param, JSON.stringify(body));
  }
});

test('the 26th webhook of an environment is refused', async (t) => {
  const own = await api.workspace('Busy hooks');
  for (let i = 0; i < 25; i++) {
    t.is((await create(own.keys.live, { url: `https://hooks.example.com/${i}` })).status, 201);
  }
  const refused = await create(own.keys.live, { url: 'https://hooks.example.com/26' });
  t.is(refused.status, 400);
  t.regex(refused.body.error.message, /25/);
  t.is((await create(own.keys.test, { url: 'https://hooks.example.com/test' })).status, 201);
});

test('PATCH and DELETE take the id in the body; other workspaces and environments get 404', async (t) => {
  const created = await create(ws.keys.live, { url: 'https://hooks.example.com/patch' });
  const id = created.body.id;
  const patched = await api.call('PATCH', '/v1/webhooks', {
    key: ws.keys.live,
    body: { id, events: ['transfer.created', 'transfer.expired'], name: 'Ops', is_active: false },
  });
  t.is(patched.status, 200, patched.text);
  t.deepEqual(patched.body.events, ['transfer.created', 'transfer.expired']);
  t.is(patched.body.name, 'Ops');
  t.false(patched.body.is_active);
  for (const key of [other.keys.live, ws.keys.test]) {
    t.is((await api.call('PATCH', '/v1/webhooks', { key, body: { id, name: 'x' } })).status, 404);
    t.is((await api.call('DELETE', '/v1/webhooks', { key, body: { id } })).status, 404);
  }
  const removed = await api.call('DELETE', '/v1/webhooks', { key: ws.keys.live, body: { id } });
  t.deepEqual(removed.body, { id, object: 'webhook', deleted: true });
  t.is((await api.call('DELETE', '/v1/webhooks', { key: ws.keys.live, body: { id } })).status, 404);
  t.is((await api.call('DELETE', '/v1/webhooks', { key: ws.keys.live, body: {} })).status, 400);
});

test('rotating the secret returns a new one and keeps the old one for 24 hours', async (t) => {
  const created = await create(ws.keys.live, { url: 'https://hooks.example.com/rotate' });
  const rotated = await api.call('POST', `/v1/webhooks/${created.body.id}/rotate-secret`, { key: ws.keys.live });
  t.is(rotated.status, 200, rotated.text);
  t.regex(rotated.body.secret, /^whsec_/);
  t.not(rotated.body.secret, created.body.secret);
  const overlap = Date.parse(rotated.body.previous_secret_expires_at) - Date.now();
  t.true(overlap > 23.9 * 3_600_000 && overlap <= 24 * 3_600_000);
});

test('scopes: webhooks:read lists, webhooks:manage is needed to change', async (t) => {
  const reader = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'hook reader', key_type: 'restricted', scopes: ['webhooks:read'] },
  });
  t.is((await api.call('GET', '/v1/webhooks', { key: reader.body.key })).status, 200);
  const denied = await create(reader.body.key, { url: 'https://hooks.example.com/nope' });
  t.is(denied.status, 403);
  t.is(denied.body.error.code, 'scope_missing');
});
