import { randomBytes } from 'node:crypto';
import test from 'ava';
import { createRuleQueries } from '../lib/db/queries/rules.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

// A rule's action needs the scope of what it does (docs/rules.md, "Scopes of
// actions"): a rule that calls a URL (`webhook`, `trigger_webhook`,
// `slack_notify`) is created, changed and deleted only by a key that also holds
// `webhooks:manage`; mail actions take no address at all.

let api: TestApi;
test.before(async () => {
  api = await startApi({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', RATE_LIMIT_WRITE: '100000' });
});
test.after.always(() => api.close());

async function restrictedKey(ws: TestWorkspace, scopes: string[]): Promise<string> {
  const created = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: `rules ${scopes.join(' ')}`, key_type: 'restricted', scopes },
  });
  if (created.status !== 201) throw new Error(`key: ${created.status} ${created.text}`);
  return created.body.key;
}

const base = { name: 'Scoped', trigger_event: 'transfer.created' };
const postingActions = [
  ['webhook', { url: 'https://hooks.example.com/rule' }],
  ['trigger_webhook', { url: 'https://hooks.example.com/trigger' }],
  ['slack_notify', { webhook_url: 'https://hooks.slack.com/services/T0/B0/x' }],
] as const;

const ruleCount = async (ws: TestWorkspace) =>
  (await api.call('GET', '/v1/rules?limit=100', { key: ws.keys.live })).body.data.length as number;

test('creating a rule that calls a URL needs webhooks:manage besides transfers:manage', async (t) => {
  const ws = await api.workspace('Rule scopes: create');
  const manager = await restrictedKey(ws, ['transfers:manage', 'transfers:read']);
  const both = await restrictedKey(ws, ['transfers:manage', 'webhooks:manage']);
  for (const [action_type, action_config] of postingActions) {
    const before = await ruleCount(ws);
    const denied = await api.call('POST', '/v1/rules', {
      key: manager,
      body: { ...base, action_type, action_config },
    });
    t.is(denied.status, 403, `${action_type}: ${denied.text}`);
    t.is(denied.body.error.code, 'scope_missing');
    t.is(denied.body.error.required_scope, 'webhooks:manage');
    t.regex(denied.body.error.message, /webhooks:manage/);
    t.is(await ruleCount(ws), before, `${action_type}: nothing was created`);

    const allowed = await api.call('POST', '/v1/rules', { key: both, body: { ...base, action_type, action_config } });
    t.is(allowed.status, 201, `${action_type}: ${allowed.text}`);
  }
  // The other actions need transfers:manage alone.
  for (const action_type of ['archive_transfer', 'email_recipient', 'email_workspace']) {
    const created = await api.call('POST', '/v1/rules', { key: manager, body: { ...base, action_type } });
    t.is(created.status, 201, `${action_type}: ${created.text}`);
  }
  // webhooks:manage alone does not manage rules.
  const hooksOnly = await restrictedKey(ws, ['webhooks:manage']);
  const noRules = await api.call('POST', '/v1/rules', {
    key: hooksOnly,
    body: { ...base, action_type: 'webhook', action_config: { url: 'https://hooks.example.com/x' } },
  });
  t.is(noRules.status, 403);
  t.is(noRules.body.error.required_scope, 'transfers:manage');
});

test('changing or deleting a rule that calls, or would call, a URL needs webhooks:manage; a refusal changes nothing', async (t) => {
  const ws = await api.workspace('Rule scopes: change');
  const manager = await restrictedKey(ws, ['transfers:manage']);
  const both = await restrictedKey(ws, ['transfers:manage', 'webhooks:manage']);
  const plain = await api.call('POST', '/v1/rules', {
    key: manager,
    body: { ...base, action_type: 'archive_transfer' },
  });
  t.is(plain.status, 201, plain.text);
  const hook = await api.call('POST', '/v1/rules', {
    key: ws.keys.live,
    body: { ...base, action_type: 'webhook', action_config: { url: 'https://hooks.example.com/kept' } },
  });
  t.is(hook.status, 201, hook.text);
  const snapshot = async (id: string) => (await api.call('GET', `/v1/rules/${id}`, { key: ws.keys.live })).body;
  const plainBefore = await snapshot(plain.body.id);
  const hookBefore = await snapshot(hook.body.id);

  const refused: Array<[string, string, string, Record<string, unknown> | undefined]> = [
    // Turning a rule into one that calls a URL.
    [
      'PATCH',
      plain.body.id,
      'to webhook',
      { action_type: 'webhook', action_config: { url: 'https://evil.example/x' } },
    ],
    [
      'PATCH',
      plain.body.id,
      'to slack',
      { action_type: 'slack_notify', action_config: { webhook_url: 'https://evil.example/s' } },
    ],
    // Changing anything of a rule that calls a URL: where it posts, what it posts, whether it posts.
    ['PATCH', hook.body.id, 'new url', { action_config: { url: 'https://evil.example/x' } }],
    ['PATCH', hook.body.id, 'new type', { action_type: 'trigger_webhook' }],
    ['PATCH', hook.body.id, 'new trigger', { trigger_event: 'api_key.created' }],
    ['PATCH', hook.body.id, 'disable', { is_enabled: false }],
    ['PATCH', hook.body.id, 'away from webhooks', { action_type: 'archive_transfer' }],
    ['DELETE', hook.body.id, 'delete', undefined],
  ];
  for (const [method, id, label, body] of refused) {
    const denied = await api.call(method, `/v1/rules/${id}`, { key: manager, ...(body ? { body } : {}) });
    t.is(denied.status, 403, `${label}: ${denied.text}`);
    t.is(denied.body.error.code, 'scope_missing', label);
    t.is(denied.body.error.required_scope, 'webhooks:manage', label);
  }
  t.deepEqual(await snapshot(plain.body.id), plainBefore, 'the plain rule is unchanged');
  t.deepEqual(await snapshot(hook.body.id), hookBefore, 'the webhook rule is unchanged');

  // transfers:manage alone still changes and deletes rules that call no URL.
  const renamed = await api.call('PATCH', `/v1/rules/${plain.body.id}`, {
    key: manager,
    body: { name: 'Renamed', action_type: 'email_workspace' },
  });
  t.is(renamed.status, 200, renamed.text);
  // With both scopes, all of it is allowed.
  const moved = await api.call('PATCH', `/v1/rules/${hook.body.id}`, {
    key: both,
    body: { action_config: { url: 'https://hooks.example.com/moved' } },
  });
  t.is(moved.status, 200, moved.text);
  t.is(moved.body.action_config.url, 'https://hooks.example.com/moved');
  const switched = await api.call('PATCH', `/v1/rules/${plain.body.id}`, {
    key: both,
    body: { action_type: 'slack_notify', action_config: { webhook_url: 'https://hooks.slack.com/services/T/B/y' } },
  });
  t.is(switched.status, 200, switched.text);
  t.is((await api.call('DELETE', `/v1/rules/${hook.body.id}`, { key: both })).status, 200);
  const gone = await api.call('POST', '/v1/rules', {
    key: manager,
    body: { ...base, action_type: 'archive_transfer' },
  });
  t.is((await api.call('DELETE', `/v1/rules/${gone.body.id}`, { key: manager })).status, 200);
});

test('mail actions take no address: to, cc, bcc or any other target is 400 validation_error', async (t) => {
  const ws = await api.workspace('Rule scopes: mail');
  for (const action_type of ['email_recipient', 'email_workspace']) {
    for (const member of ['to', 'cc', 'bcc', 'recipient', 'recipients', 'email', 'reply_to']) {
      const action_config = { subject: 'Hi', [member]: 'attacker@evil.example' };
      const refused = await api.call('POST', '/v1/rules', {
        key: ws.keys.live,
        body: { ...base, action_type, action_config },
      });
      t.is(refused.status, 400, `${action_type}.${member}: ${refused.text}`);
      t.is(refused.body.error.code, 'validation_error');
      t.is(refused.body.error.param, `action_config.${member}`);
      t.regex(refused.body.error.message, /take no address|recipient|owner/, `${action_type}.${member}`);
    }
  }
  // Nor on a PATCH, and the refused PATCH changes nothing.
  const created = await api.call('POST', '/v1/rules', {
    key: ws.keys.live,
    body: { ...base, action_type: 'email_recipient', action_config: { subject: 'Files' } },
  });
  t.is(created.status, 201, created.text);
  for (const body of [
    { action_config: { subject: 'Files', to: 'attacker@evil.example' } },
    { action_type: 'email_workspace', action_config: { bcc: 'attacker@evil.example' } },
  ]) {
    const refused = await api.call('PATCH', `/v1/rules/${created.body.id}`, { key: ws.keys.live, body });
    t.is(refused.status, 400, refused.text);
    t.is(refused.body.error.code, 'validation_error');
    t.regex(refused.body.error.param, /^action_config\.(to|bcc)$/);
  }
  const after = await api.call('GET', `/v1/rules/${created.body.id}`, { key: ws.keys.live });
  t.like(after.body, { action_type: 'email_recipient', action_config: { subject: 'Files' } });
});

test('without webhooks:manage, a body for a rule that calls a URL is refused for its scope before its content', async (t) => {
  const ws = await api.workspace('Rule scopes: before the body');
  const manager = await restrictedKey(ws, ['transfers:manage']);
  const hook = await api.call('POST', '/v1/rules', {
    key: ws.keys.live,
    body: { ...base, action_type: 'webhook', action_config: { url: 'https://hooks.example.com/kept' } },
  });
  t.is(hook.status, 201, hook.text);
  const invalidBodies: Array<[string, string, Record<string, unknown>]> = [
    ['POST', '/v1/rules', { ...base, action_type: 'webhook', action_config: { url: 42 } }],
    ['POST', '/v1/rules', { ...base, action_type: 'slack_notify', action_config: { to: 'someone@example.com' } }],
    ['POST', '/v1/rules', { ...base, name: '', action_type: 'trigger_webhook' }],
    ['PATCH', `/v1/rules/${hook.body.id}`, { action_config: { url: 'not a url', extra: true } }],
    ['PATCH', `/v1/rules/${hook.body.id}`, { name: '' }],
  ];
  for (const [method, path, body] of invalidBodies) {
    const denied = await api.call(method, path, { key: manager, body });
    t.is(denied.status, 403, `${method} ${JSON.stringify(body)}: ${denied.text}`);
    t.is(denied.body.error.code, 'scope_missing');
    t.is(denied.body.error.required_scope, 'webhooks:manage');
  }
  // A key that holds the scope hears about the body.
  const invalid = await api.call('POST', '/v1/rules', {
    key: ws.keys.live,
    body: { ...base, action_type: 'webhook', action_config: { url: 42 } },
  });
  t.is(invalid.status, 400, invalid.text);
  t.is(invalid.body.error.param, 'action_config.url');
  // Another workspace's rule id is not found, whatever the body.
  const other = await api.workspace('Rule scopes: someone else');
  const stranger = await api.call('PATCH', `/v1/rules/${hook.body.id}`, { key: other.keys.live, body: { name: '' } });
  t.is(stranger.status, 400, stranger.text);
});

test('target URLs are read in full only with webhooks:manage; other readers see the host and a masked path', async (t) => {
  const ws = await api.workspace('Rule scopes: reading targets');
  const reader = await restrictedKey(ws, ['transfers:read']);
  const hooksReader = await restrictedKey(ws, ['transfers:read', 'webhooks:read']);
  const manager = await restrictedKey(ws, ['transfers:read', 'webhooks:manage']);
  const slackUrl = 'https://hooks.slack.com/services/T0SECRET/B0SECRET/xoxSECRET';
  const hookUrl = 'https://hooks.example.com:8443/receive?token=SECRET';
  const slack = await api.call('POST', '/v1/rules', {
    key: ws.keys.live,
    body: { ...base, action_type: 'slack_notify', action_config: { webhook_url: slackUrl } },
  });
  const hook = await api.call('POST', '/v1/rules', {
    key: ws.keys.live,
    body: { ...base, action_type: 'webhook', action_config: { url: hookUrl } },
  });
  const tag = await api.call('POST', '/v1/rules', {
    key: ws.keys.live,
    body: { ...base, action_type: 'tag_transfer', action_config: { tag: 'urgent' } },
  });
  t.is(slack.status, 201, slack.text);
  t.is(hook.status, 201, hook.text);
  t.is(tag.status, 201, tag.text);

  const masked = {
    [slack.body.id]: { webhook_url: 'https://hooks.slack.com/***' },
    [hook.body.id]: { url: 'https://hooks.example.com:8443/***' },
    [tag.body.id]: { tag: 'urgent' },
  };
  const full = {
    [slack.body.id]: { webhook_url: slackUrl },
    [hook.body.id]: { url: hookUrl },
    [tag.body.id]: { tag: 'urgent' },
  };
  for (const [key, expected, who] of [
    [reader, masked, 'transfers:read'],
    [hooksReader, masked, 'webhooks:read'],
    [manager, full, 'webhooks:manage'],
    [ws.keys.live, full, 'full key'],
  ] as const) {
    const list = await api.call('GET', '/v1/rules?limit=100', { key });
    t.is(list.status, 200, list.text);
    for (const [id, config] of Object.entries(expected)) {
      const listed = list.body.data.find((rule: { id: string }) => rule.id === id);
      t.deepEqual(listed.action_config, config, `${who}: list`);
      const one = await api.call('GET', `/v1/rules/${id}`, { key });
      t.is(one.status, 200, one.text);
      t.deepEqual(one.body.action_config, config, `${who}: get`);
    }
    if (expected === masked) t.false(list.text.includes('SECRET'), `${who}: nothing of a path or query`);
  }

  // An execution's error names the URL the call went to: masked alike.
  const queries = createRuleQueries(api.services.db);
  const row = await queries.find({ workspaceId: ws.workspace_id, environment: 'live' }, slack.body.id);
  if (!row) throw new Error('rule not stored');
  const execution = await queries.startExecution(row, {
    id: `evt_${randomBytes(16).toString('hex')}`,
    type: 'transfer.created',
  });
  if (!execution) throw new Error('execution not started');
  await queries.finishExecution(execution.id, {
    status: 'failed',
    error: `slack_notify to ${slackUrl}: receiver answered 500`,
    durationMs: 10,
  });
  const path = `/v1/rules/${slack.body.id}/executions`;
  const seen = async (key: string) => {
    const response = await api.call('GET', path, { key });
    t.is(response.status, 200, response.text);
    return response.body.data[0].error;
  };
  t.is(await seen(reader), 'slack_notify to https://hooks.slack.com/***: receiver answered 500');
  t.is(await seen(manager), `slack_notify to ${slackUrl}: receiver answered 500`);
});
