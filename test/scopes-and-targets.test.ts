import test from 'ava';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { createWebhookQueries } from '../lib/db/queries/webhooks.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { startReceiver } from './helpers/receiver.ts';
import { content, createTransfer, links, put, waitForTransfer } from './helpers/transfers.ts';

// Two promises that had no test of their own:
// - a restricted key without a route's scope is refused (403 scope_missing
//   naming the scope) on transfer revocation, folder changes and every webhook
//   write, and the resource is as it was afterwards;
// - private, loopback, link-local and metadata targets are refused when a
//   webhook or a rule is UPDATED, not only when it is created.
// No packet leaves the machine: these URLs are judged when saved, without a
// lookup (names resolved when called are test/webhook-post.test.ts's part).

let api: TestApi;
/** Production's guard: private targets refused. */
let strict: TestApi;
test.before(async () => {
  [api, strict] = await Promise.all([startApi(), startApi({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' })]);
});
test.after.always(async () => {
  await Promise.all([api?.close(), strict?.close()]);
});

async function keyWith(on: TestApi, ws: TestWorkspace, scopes: string[]): Promise<string> {
  const created = await on.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: `only ${scopes.join(' ')}`, key_type: 'restricted', scopes },
  });
  if (created.status !== 201) throw new Error(`key: ${created.status} ${created.text}`);
  return created.body.key;
}

function refused(t: any, response: { status: number; text: string; body: any }, scope: string, label: string) {
  t.is(response.status, 403, `${label}: ${response.text}`);
  t.is(response.body?.error?.code, 'scope_missing', label);
  t.is(response.body?.error?.required_scope, scope, label);
}

// ---- Scopes. ----

test('revoking a transfer needs transfers:manage: without it, 403 and the transfer still downloads', async (t) => {
  const ws = await api.workspace('Scopes: revoke');
  const writer = await keyWith(api, ws, ['transfers:read', 'transfers:write']);
  const bytes = content(1024);
  const created = await createTransfer(api, writer, { files: [{ name: 'kept.bin', size: bytes.length }] });
  await put(created.upload_urls[0]?.url ?? '', bytes);
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');

  refused(
    t,
    await api.call('DELETE', `/v1/transfers/${created.transfer.id}`, { key: writer }),
    'transfers:manage',
    'DELETE /v1/transfers/{id}',
  );
  const after = await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live });
  t.like(after.body, { status: 'active', status_reason: null });
  t.is((await links(api, created.transfer.short_code)).status, 200, 'the link still works');
  const deleted = await createEventQueries(api.services.db).listByType(
    { workspaceId: ws.workspace_id, environment: 'live' },
    'transfer.deleted',
  );
  t.deepEqual(deleted, [], 'no transfer.deleted was recorded');
  // The same call with the scope revokes: the refusal was the scope, not the request.
  const manager = await keyWith(api, ws, ['transfers:manage']);
  t.is((await api.call('DELETE', `/v1/transfers/${created.transfer.id}`, { key: manager })).status, 200);
});

test('folder changes need folders:manage: filing, unfiling and creating folders are refused and change nothing', async (t) => {
  const ws = await api.workspace('Scopes: folders');
  const manager = await keyWith(api, ws, ['transfers:read', 'transfers:write', 'transfers:manage']);
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'a.txt', size: 1 }] });
  const other = await createTransfer(api, ws.keys.live, { files: [{ name: 'b.txt', size: 1 }] });
  const folder = await api.call('POST', '/v1/folders', { key: ws.keys.live, body: { name: 'Filed' } });
  t.is(folder.status, 201, folder.text);
  const filed = await api.call('PUT', `/v1/transfers/${other.transfer.id}/folder`, {
    key: ws.keys.live,
    body: { folder_id: folder.body.id },
  });
  t.is(filed.status, 200, filed.text);
  const folderOf = async (id: string) =>
    (await api.call('GET', `/v1/transfers/${id}`, { key: ws.keys.live })).body.folder_id;
  const folders = async () => (await api.call('GET', '/v1/folders', { key: ws.keys.live })).body.data;
  const foldersBefore = await folders();

  refused(
    t,
    await api.call('PUT', `/v1/transfers/${created.transfer.id}/folder`, {
      key: manager,
      body: { folder_id: folder.body.id },
    }),
    'folders:manage',
    'PUT folder',
  );
  refused(
    t,
    await api.call('DELETE', `/v1/transfers/${other.transfer.id}/folder`, { key: manager }),
    'folders:manage',
    'DELETE folder',
  );
  refused(
    t,
    await api.call('POST', '/v1/folders', { key: manager, body: { name: 'Not allowed' } }),
    'folders:manage',
    'POST /v1/folders',
  );
  t.is(await folderOf(created.transfer.id), null, 'not filed');
  t.is(await folderOf(other.transfer.id), folder.body.id, 'still filed');
  t.deepEqual(await folders(), foldersBefore, 'no folder created');
});

test('webhook changes need webhooks:manage: update, delete, rotate, test and redeliver are refused and change nothing', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  const ws = await api.workspace('Scopes: webhooks');
  const reader = await keyWith(api, ws, ['webhooks:read', 'transfers:manage']);
  const hook = await api.call('POST', '/v1/webhooks', {
    key: ws.keys.live,
    body: { url: receiver.url('/hook'), events: ['transfer.created'] },
  });
  t.is(hook.status, 201, hook.text);
  const id = hook.body.id;
  // One delivery to redeliver, made with a full key.
  const ping = await api.call('POST', `/v1/webhooks/${id}/test`, { key: ws.keys.live });
  t.is(ping.status, 200, ping.text);
  const listed = async () => (await api.call('GET', '/v1/webhooks', { key: ws.keys.live })).body.data;
  const deliveries = async () =>
    (await api.call('GET', `/v1/webhooks/${id}/deliveries?limit=100`, { key: ws.keys.live })).body.data;
  const before = {
    hooks: await listed(),
    deliveries: await deliveries(),
    row: await createWebhookQueries(api.services.db).findById(id),
    received: receiver.received.length,
  };

  for (const [method, path, body, label] of [
    ['PATCH', '/v1/webhooks', { id, url: receiver.url('/moved') }, 'PATCH url'],
    ['PATCH', '/v1/webhooks', { id, is_active: false }, 'PATCH is_active'],
    ['PATCH', '/v1/webhooks', { id, events: ['*'] }, 'PATCH events'],
    ['DELETE', '/v1/webhooks', { id }, 'DELETE'],
    ['POST', `/v1/webhooks/${id}/rotate-secret`, undefined, 'rotate-secret'],
    ['POST', `/v1/webhooks/${id}/test`, undefined, 'test'],
    ['POST', `/v1/webhooks/${id}/deliveries/${ping.body.delivery_id}/retry`, undefined, 'redeliver'],
  ] as const) {
    refused(t, await api.call(method, path, { key: reader, ...(body ? { body } : {}) }), 'webhooks:manage', label);
  }
  t.deepEqual(await listed(), before.hooks, 'the webhook is as it was');
  t.deepEqual(await deliveries(), before.deliveries, 'no attempt was added');
  const row = await createWebhookQueries(api.services.db).findById(id);
  t.is(row?.secret_sealed, before.row?.secret_sealed, 'the secret was not rotated');
  t.is(row?.previous_secret_sealed ?? null, before.row?.previous_secret_sealed ?? null);
  t.is(receiver.received.length, before.received, 'nothing was sent: the refused calls return before any POST');
  // The reader still reads.
  t.is((await api.call('GET', `/v1/webhooks/${id}/deliveries`, { key: reader })).status, 200);
});

// ---- Targets on updates. ----

/** URLs no webhook or rule may target, whatever the setting says for private networks. */
const METADATA = [
  'https://169.254.169.254/latest/meta-data/iam/security-credentials/',
  'https://[fd00:ec2::254]/latest/meta-data/',
  'https://169.254.170.2/v2/credentials',
  'https://100.100.100.200/latest/meta-data/',
  'https://[::ffff:169.254.169.254]/',
  'https://metadata.google.internal/computeMetadata/v1/',
  'https://metadata.google.internal./computeMetadata/v1/',
  'https://METADATA.GOOGLE.INTERNAL/',
];
/** Refused by production's guard (WEBHOOK_ALLOW_PRIVATE_TARGETS=false). */
const PRIVATE = [
  'https://10.0.0.8/x',
  'https://172.16.5.4/x',
  'https://192.168.1.1/x',
  'https://100.64.0.1/x',
  'https://[fd12:3456::1]/x',
  'https://127.0.0.1/x',
  'https://0x7f.0.0.1/x',
  'https://[::1]/x',
  'https://localhost/x',
  'https://api.localhost/x',
  'https://LOCALHOST./x',
  'https://169.254.10.10/x',
  'https://[fe80::1]/x',
  'https://0.0.0.0/x',
  ...METADATA,
];

test('webhook UPDATES refuse private, loopback, link-local and metadata URLs, and keep the old URL', async (t) => {
  const ws = await strict.workspace('Targets: webhook updates');
  const hook = await strict.call('POST', '/v1/webhooks', {
    key: ws.keys.live,
    body: { url: 'https://hooks.example.com/original' },
  });
  t.is(hook.status, 201, hook.text);
  for (const url of [...PRIVATE, 'http://hooks.example.com/plain', 'https://user:pw@hooks.example.com/']) {
    const patched = await strict.call('PATCH', '/v1/webhooks', { key: ws.keys.live, body: { id: hook.body.id, url } });
    t.is(patched.status, 400, `${url}: ${patched.text}`);
    t.is(patched.body.error.code, 'validation_error', url);
    t.is(patched.body.error.param, 'url', url);
  }
  const after = await strict.call('GET', '/v1/webhooks', { key: ws.keys.live });
  t.is(after.body.data.find((w: any) => w.id === hook.body.id).url, 'https://hooks.example.com/original');

  // Metadata stays refused where private targets are allowed (the test stack's setting).
  const lenient = await api.workspace('Targets: webhook updates, private allowed');
  const local = await api.call('POST', '/v1/webhooks', {
    key: lenient.keys.live,
    body: { url: 'https://hooks.example.com/original' },
  });
  for (const url of METADATA) {
    const patched = await api.call('PATCH', '/v1/webhooks', {
      key: lenient.keys.live,
      body: { id: local.body.id, url },
    });
    t.is(patched.status, 400, `${url} (private allowed): ${patched.text}`);
    t.regex(patched.body.error.message, /metadata/, url);
  }
});

test('rule UPDATES refuse private, loopback, link-local and metadata URLs for webhook and slack actions', async (t) => {
  const ws = await strict.workspace('Targets: rule updates');
  const rule = async (action_type: string, action_config: Record<string, unknown>) => {
    const created = await strict.call('POST', '/v1/rules', {
      key: ws.keys.live,
      body: { name: action_type, trigger_event: 'transfer.created', action_type, action_config },
    });
    if (created.status !== 201) throw new Error(`rule: ${created.status} ${created.text}`);
    return created.body as { id: string; action_config: Record<string, unknown> };
  };
  const hook = await rule('webhook', { url: 'https://hooks.example.com/rule' });
  const slack = await rule('slack_notify', { webhook_url: 'https://hooks.slack.com/services/T/B/x' });
  const plain = await rule('archive_transfer', {});
  for (const url of PRIVATE) {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      [hook.id, { action_config: { url } }, 'action_config.url'],
      [hook.id, { action_type: 'trigger_webhook', action_config: { url } }, 'action_config.url'],
      [slack.id, { action_config: { webhook_url: url } }, 'action_config.webhook_url'],
      [plain.id, { action_type: 'slack_notify', action_config: { webhook_url: url } }, 'action_config.webhook_url'],
      [plain.id, { action_type: 'webhook', action_config: { url } }, 'action_config.url'],
    ];
    for (const [id, body, param] of cases) {
      const patched = await strict.call('PATCH', `/v1/rules/${id}`, { key: ws.keys.live, body });
      t.is(patched.status, 400, `${url} ${JSON.stringify(body)}: ${patched.text}`);
      t.is(patched.body.error.code, 'validation_error');
      t.is(patched.body.error.param, param, url);
    }
  }
  const get = async (id: string) => (await strict.call('GET', `/v1/rules/${id}`, { key: ws.keys.live })).body;
  t.like(await get(hook.id), { action_type: 'webhook', action_config: { url: 'https://hooks.example.com/rule' } });
  t.like(await get(slack.id), {
    action_type: 'slack_notify',
    action_config: { webhook_url: 'https://hooks.slack.com/services/T/B/x' },
  });
  t.like(await get(plain.id), { action_type: 'archive_transfer', action_config: {} });

  // Metadata stays refused where private targets are allowed.
  const lenient = await api.workspace('Targets: rule updates, private allowed');
  const local = await api.call('POST', '/v1/rules', {
    key: lenient.keys.live,
    body: {
      name: 'hook',
      trigger_event: 'transfer.created',
      action_type: 'webhook',
      action_config: { url: 'https://hooks.example.com/rule' },
    },
  });
  for (const url of METADATA) {
    const patched = await api.call('PATCH', `/v1/rules/${local.body.id}`, {
      key: lenient.keys.live,
      body: { action_config: { url } },
    });
    t.is(patched.status, 400, `${url} (private allowed): ${patched.text}`);
    t.regex(patched.body.error.message, /metadata/, url);
  }
});
