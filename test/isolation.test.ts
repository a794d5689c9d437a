import test from 'ava';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

let api: TestApi;
let acme: TestWorkspace;
let globex: TestWorkspace;
test.before(async () => {
  api = await startApi();
  acme = await api.workspace('Acme');
  globex = await api.workspace('Globex');
});
test.after.always(() => api.close());

const restricted = { name: 'isolated', key_type: 'restricted', scopes: ['transfers:read'] };

async function liveKeyId(ws: TestWorkspace) {
  const created = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: restricted });
  return created.body.id as string;
}

test('a test or sandbox key reading a live key gets 404 on every key route', async (t) => {
  const id = await liveKeyId(acme);
  for (const key of [acme.keys.test, acme.keys.sandbox]) {
    const attempts = [
      await api.call('GET', `/v1/api-keys/${id}`, { key }),
      await api.call('PATCH', `/v1/api-keys/${id}`, { key, body: { name: 'hijack' } }),
      await api.call('DELETE', `/v1/api-keys/${id}`, { key }),
      await api.call('POST', `/v1/api-keys/${id}/rotate`, { key, body: { mfa_code: acme.mfa() } }),
    ];
    for (const response of attempts) {
      t.is(response.status, 404);
      t.is(response.body.error.code, 'not_found');
    }
  }
  const untouched = await api.call('GET', `/v1/api-keys/${id}`, { key: acme.keys.live });
  t.is(untouched.body.name, 'isolated');
  t.is(untouched.body.revoked_at, null);
});

test('another workspace gets 404 for a key id and never sees it in lists', async (t) => {
  const id = await liveKeyId(acme);
  const attempts = [
    await api.call('GET', `/v1/api-keys/${id}`, { key: globex.keys.live }),
    await api.call('PATCH', `/v1/api-keys/${id}`, { key: globex.keys.live, body: { is_active: false } }),
    await api.call('DELETE', `/v1/api-keys/${id}`, { key: globex.keys.live }),
  ];
  for (const response of attempts) t.is(response.status, 404);
  const list = await api.call('GET', '/v1/api-keys?limit=100', { key: globex.keys.live });
  t.false(list.body.data.some((k: { id: string }) => k.id === id));
  t.true(list.body.data.every((k: { environment: string }) => k.environment === 'live'));
});

test('lists and the audit log are per environment', async (t) => {
  const id = await liveKeyId(acme);
  const testList = await api.call('GET', '/v1/api-keys?limit=100', { key: acme.keys.test });
  t.false(testList.body.data.some((k: { id: string }) => k.id === id));
  t.true(testList.body.data.every((k: { environment: string }) => k.environment === 'test'));
  const sandboxAudit = await api.call('GET', '/v1/audit?limit=500', { key: acme.keys.sandbox });
  t.false(sandboxAudit.body.data.some((e: { resource_id: string }) => e.resource_id === id));
  const liveAudit = await api.call('GET', '/v1/audit?limit=500', { key: acme.keys.live });
  t.true(liveAudit.body.data.some((e: { resource_id: string }) => e.resource_id === id));
  const otherAudit = await api.call('GET', '/v1/audit?limit=500', { key: globex.keys.live });
  t.false(otherAudit.body.data.some((e: { workspace_id: string }) => e.workspace_id !== globex.workspace_id));
});

test('collections: another workspace or environment gets 404 on every route, lists never show them', async (t) => {
  const transfer = await api.call('POST', '/v1/transfers', {
    key: acme.keys.live,
    body: { files: [{ name: 'mine.bin', size: 1 }] },
  });
  const transferId = transfer.body.transfer.id as string;
  const created = await api.call('POST', '/v1/collections', {
    key: acme.keys.live,
    body: { title: 'Acme only', transfer_ids: [transferId] },
  });
  t.is(created.status, 201, created.text);
  const id = created.body.id as string;
  for (const key of [globex.keys.live, acme.keys.test, acme.keys.sandbox]) {
    const attempts = [
      await api.call('GET', `/v1/collections/${id}`, { key }),
      await api.call('PATCH', `/v1/collections/${id}`, { key, body: { title: 'hijack' } }),
      await api.call('POST', `/v1/collections/${id}/transfers`, { key, body: { transfer_ids: [transferId] } }),
      await api.call('DELETE', `/v1/collections/${id}/transfers/${transferId}`, { key }),
      await api.call('POST', `/v1/collections/${id}/rotate-share-link`, { key }),
      await api.call('DELETE', `/v1/collections/${id}/share-link`, { key }),
      await api.call('DELETE', `/v1/collections/${id}`, { key }),
      // Someone else's transfer cannot join one's own collection either.
      await api.call('POST', '/v1/collections', { key, body: { title: 'grab', transfer_ids: [transferId] } }),
    ];
    for (const response of attempts) {
      t.is(response.status, 404, response.text);
      t.is(response.body.error.code, 'not_found');
    }
    const list = await api.call('GET', '/v1/collections?limit=100', { key });
    t.false(list.body.data.some((c: { id: string }) => c.id === id));
  }
  const untouched = await api.call('GET', `/v1/collections/${id}`, { key: acme.keys.live });
  t.is(untouched.body.title, 'Acme only');
  t.is(untouched.body.share_url, created.body.share_url);
  t.deepEqual(
    untouched.body.transfers.map((x: { id: string }) => x.id),
    [transferId],
  );
});

test('recipients and transfer recipients: other workspaces and environments get 404 and never see them', async (t) => {
  const made = await api.call('POST', '/v1/recipients', {
    key: acme.keys.live,
    body: { email: `isolated-${Date.now()}@valise.test`, name: 'Isolated' },
  });
  t.is(made.status, 201);
  const id = made.body.id as string;
  const transfer = await api.call('POST', '/v1/transfers', {
    key: acme.keys.live,
    body: { files: [{ name: 'a', size: 1 }], recipients: [made.body.email] },
  });
  t.is(transfer.status, 201);
  for (const key of [globex.keys.live, acme.keys.test, acme.keys.sandbox]) {
    const attempts = [
      await api.call('GET', `/v1/recipients/${id}`, { key }),
      await api.call('PATCH', `/v1/recipients/${id}`, { key, body: { name: 'hijack' } }),
      await api.call('DELETE', `/v1/recipients/${id}`, { key }),
      await api.call('GET', `/v1/transfers/${transfer.body.transfer.id}/recipients`, { key }),
    ];
    for (const response of attempts) {
      t.is(response.status, 404, response.text);
      t.is(response.body.error.code, 'not_found');
    }
    const list = await api.call('GET', `/v1/recipients?limit=100&search=${encodeURIComponent(made.body.email)}`, {
      key,
    });
    t.deepEqual(list.body.data, []);
  }
  // The same address is a separate entry in another workspace.
  const theirs = await api.call('POST', '/v1/recipients', { key: globex.keys.live, body: { email: made.body.email } });
  t.is(theirs.status, 201);
  const untouched = await api.call('GET', `/v1/recipients/${id}`, { key: acme.keys.live });
  t.like(untouched.body, { name: 'Isolated', stats: { transfers_sent: 1 } });
});

test('vaults: another workspace or environment gets 404 on every owner route, lists never show them', async (t) => {
  const created = await api.call('POST', '/v1/coffres', { key: acme.keys.live, body: { name: 'Acme room' } });
  t.is(created.status, 201, created.text);
  const id = created.body.id as string;
  const member = await api.call('POST', `/v1/coffres/${id}/members`, {
    key: acme.keys.live,
    body: { email: 'insider@acme.test', access: 'view' },
  });
  const memberId = member.body.id as string;
  const item = await api.call('POST', `/v1/coffres/${id}/items`, {
    key: acme.keys.live,
    body: { name: 'plan.pdf', size: 1 },
  });
  const itemId = item.body.item.id as string;
  for (const key of [globex.keys.live, acme.keys.test, acme.keys.sandbox]) {
    const attempts = [
      await api.call('GET', `/v1/coffres/${id}`, { key }),
      await api.call('PATCH', `/v1/coffres/${id}`, { key, body: { name: 'hijack' } }),
      await api.call('GET', `/v1/coffres/${id}/members`, { key }),
      await api.call('POST', `/v1/coffres/${id}/members`, { key, body: { email: 'x@globex.test', access: 'upload' } }),
      await api.call('PATCH', `/v1/coffres/${id}/members/${memberId}`, { key, body: { access: 'upload' } }),
      await api.call('POST', `/v1/coffres/${id}/members/${memberId}/invitation`, { key }),
      await api.call('DELETE', `/v1/coffres/${id}/members/${memberId}`, { key }),
      await api.call('GET', `/v1/coffres/${id}/items`, { key }),
      await api.call('POST', `/v1/coffres/${id}/items`, { key, body: { name: 'x.bin', size: 1 } }),
      await api.call('GET', `/v1/coffres/${id}/items/${itemId}`, { key }),
      await api.call('DELETE', `/v1/coffres/${id}/items/${itemId}`, { key }),
      await api.call('GET', `/v1/coffres/${id}/access-log`, { key }),
      await api.call('GET', `/v1/coffres/${id}/archive`, { key }),
      await api.call('GET', `/v1/coffres/${id}/archive?item_ids=${itemId}`, { key }),
      await api.call('DELETE', `/v1/coffres/${id}`, { key }),
    ];
    for (const response of attempts) {
      t.is(response.status, 404, response.text);
      t.is(response.body.error.code, 'not_found');
    }
    const list = await api.call('GET', '/v1/coffres?limit=100', { key });
    t.false(list.body.data.some((c: { id: string }) => c.id === id));
  }
  const untouched = await api.call('GET', `/v1/coffres/${id}`, { key: acme.keys.live });
  t.like(untouched.body, { name: 'Acme room', member_count: 1, item_count: 1 });
});

test("a transfer's archive: other workspaces and environments get 404", async (t) => {
  const transfer = await api.call('POST', '/v1/transfers', {
    key: acme.keys.live,
    body: { files: [{ name: 'a', size: 1 }] },
  });
  t.is(transfer.status, 201);
  for (const key of [globex.keys.live, acme.keys.test, acme.keys.sandbox]) {
    const response = await api.call('GET', `/v1/transfers/${transfer.body.transfer.id}/archive`, { key });
    t.is(response.status, 404, response.text);
    t.is(response.body.error.code, 'not_found');
  }
  // Its own workspace: there, but not downloadable before its upload (403 uploading).
  const own = await api.call('GET', `/v1/transfers/${transfer.body.transfer.id}/archive`, { key: acme.keys.live });
  t.is(own.status, 403);
  t.is(own.body.error.reason, 'uploading');
});
