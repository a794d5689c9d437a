import { randomBytes } from 'node:crypto';
import test from 'ava';
import { createRuleQueries } from '../lib/db/queries/rules.ts';
import { ruleSigningSecret } from '../lib/rules/service.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

let api: TestApi;
let ws: TestWorkspace;
let other: TestWorkspace;
test.before(async () => {
  // Pinned, whatever the environment says: the target guard refuses private addresses here.
  // The file sends far more writes per minute than the default quota allows.
  api = await startApi({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', RATE_LIMIT_WRITE: '100000' });
  ws = await api.workspace('Rules');
  other = await api.workspace('Other rules');
});
test.after.always(() => api.close());

const base = { name: 'Rule', trigger_event: 'transfer.created', action_type: 'archive_transfer' };
const create = (key: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
  api.call('POST', '/v1/rules', { key, body, ...(headers ? { headers } : {}) });
const tenant = (w: TestWorkspace, environment: 'live' | 'test' = 'live') => ({
  workspaceId: w.workspace_id,
  environment,
});
const eventId = () => `evt_${randomBytes(16).toString('hex')}`;
/** Ids in list order: newest first by (created_at, id), as the API sorts (rows may share a millisecond). */
const newestFirst = (rows: Array<{ id: string; created_at: string | Date }>) =>
  [...rows]
    .sort((a, b) => new Date(b.created_at).getTime() - new Date(a.created_at).getTime() || (a.id < b.id ? 1 : -1))
    .map((row) => row.id);
const idsOf = (response: { body: { data: Array<{ id: string }> } }) => response.body.data.map((row) => row.id);

test('creating a rule of each action type returns it with its normalised config', async (t) => {
  const cases: Array<[string, Record<string, unknown> | undefined, Record<string, unknown>]> = [
    ['webhook', { url: 'https://hooks.example.com/rule' }, { url: 'https://hooks.example.com/rule' }],
    ['trigger_webhook', { url: 'https://Hooks.Example.com' }, { url: 'https://hooks.example.com/' }],
    [
      'slack_notify',
      { webhook_url: 'https://hooks.slack.com/services/T0/B0/x' },
      { webhook_url: 'https://hooks.slack.com/services/T0/B0/x' },
    ],
    [
      'email_recipient',
      { subject: '  Your files  ', body: 'Hello\nthere ' },
      { subject: 'Your files', body: 'Hello\nthere' },
    ],
    ['email_workspace', undefined, {}],
    ['email_workspace', { subject: '   ' }, {}],
    ['tag_transfer', { tag: '  urgent ' }, { tag: 'urgent' }],
    ['untag_transfer', { tag: 'urgent' }, { tag: 'urgent' }],
    ['extend_expiry', { hours: 12 }, { hours: 12 }],
    ['extend_expiry', { days: 1.5, hours: 2 }, { hours: 2, days: 1.5 }],
    ['extend_expiry', { days: 365 }, { days: 365 }],
    ['archive_transfer', {}, {}],
    ['archive_transfer', undefined, {}],
  ];
  let lastId = '';
  for (const [actionType, config, expected] of cases) {
    const body = { ...base, name: `Rule ${actionType}`, action_type: actionType };
    const created = await create(ws.keys.live, config === undefined ? body : { ...body, action_config: config });
    t.is(created.status, 201, `${actionType}: ${created.text}`);
    const rule = created.body;
    lastId = rule.id;
    t.regex(rule.id, /^[0-9a-f-]{36}$/);
    t.is(rule.object, 'rule');
    t.is(rule.workspace_id, ws.workspace_id);
    t.is(rule.name, `Rule ${actionType}`);
    t.is(rule.description, null);
    t.is(rule.trigger_event, 'transfer.created');
    t.is(rule.trigger_conditions, null);
    t.is(rule.action_type, actionType);
    t.deepEqual(rule.action_config, expected, actionType);
    t.true(rule.is_enabled);
    t.is(rule.trigger_count, 0);
    t.is(rule.last_triggered_at, null);
    t.false(Number.isNaN(Date.parse(rule.created_at)));
    t.true(Date.parse(rule.updated_at) >= Date.parse(rule.created_at));
    t.false('environment' in rule);
    if (actionType === 'webhook' || actionType === 'trigger_webhook') t.regex(rule.secret, /^whsec_/);
    else t.false('secret' in rule, actionType);
  }
  const audit = await api.call('GET', '/v1/audit?action=rule.create&limit=500', { key: ws.keys.live });
  const entry = audit.body.data.find((e: { resource_id: string }) => e.resource_id === lastId);
  t.like(entry, { resource_type: 'rule', status: 'success' });
});

test('invalid rules are 400 validation_error naming the field at fault', async (t) => {
  const long = (n: number) => 'x'.repeat(n);
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ ...base, name: '' }, 'name'],
    [{ ...base, name: '   ' }, 'name'],
    [{ ...base, name: long(201) }, 'name'],
    [{ trigger_event: 'transfer.created', action_type: 'archive_transfer' }, 'name'],
    [{ ...base, trigger_event: 'transfer.teleported' }, 'trigger_event'],
    [{ ...base, trigger_event: 'transfer.scanned' }, 'trigger_event'], // an event, but not a rule trigger
    [{ name: 'R', action_type: 'archive_transfer' }, 'trigger_event'],
    [{ ...base, action_type: 'send_fax' }, 'action_type'],
    [{ name: 'R', trigger_event: 'transfer.created' }, 'action_type'],
    [{ ...base, action_config: 'x' }, 'action_config'],
    [{ ...base, action_config: null }, 'action_config'],
    [{ ...base, action_config: [] }, 'action_config'],
    [{ ...base, description: long(501) }, 'description'],
    [{ ...base, is_enabled: 'maybe' }, 'is_enabled'],
    [{ ...base, colour: 'blue' }, 'colour'],
    // Incomplete or invalid action_config.
    [{ ...base, action_type: 'webhook' }, 'action_config.url'],
    [{ ...base, action_type: 'webhook', action_config: { url: 'not a url' } }, 'action_config.url'],
    [{ ...base, action_type: 'webhook', action_config: { url: 42 } }, 'action_config.url'],
    [
      { ...base, action_type: 'trigger_webhook', action_config: { url: 'ftp://hooks.example.com/x' } },
      'action_config.url',
    ],
    [
      { ...base, action_type: 'trigger_webhook', action_config: { url: 'http://hooks.example.com/x' } },
      'action_config.url',
    ],
    [
      { ...base, action_type: 'webhook', action_config: { url: 'https://u:p@hooks.example.com/' } },
      'action_config.url',
    ],
    [{ ...base, action_type: 'slack_notify', action_config: {} }, 'action_config.webhook_url'],
    [
      { ...base, action_type: 'slack_notify', action_config: { url: 'https://hooks.slack.com/x' } },
      'action_config.url',
    ],
    [{ ...base, action_type: 'tag_transfer' }, 'action_config.tag'],
    [{ ...base, action_type: 'tag_transfer', action_config: { tag: '   ' } }, 'action_config.tag'],
    [{ ...base, action_type: 'untag_transfer', action_config: { tag: long(65) } }, 'action_config.tag'],
    [{ ...base, action_type: 'tag_transfer', action_config: { tag: 7 } }, 'action_config.tag'],
    [{ ...base, action_type: 'extend_expiry' }, 'action_config.hours'],
    [{ ...base, action_type: 'extend_expiry', action_config: { hours: 0 } }, 'action_config.hours'],
    [{ ...base, action_type: 'extend_expiry', action_config: { hours: -3 } }, 'action_config.hours'],
    [{ ...base, action_type: 'extend_expiry', action_config: { hours: '12' } }, 'action_config.hours'],
    [{ ...base, action_type: 'extend_expiry', action_config: { days: 0 } }, 'action_config.days'],
    [{ ...base, action_type: 'extend_expiry', action_config: { days: 366 } }, 'action_config.days'],
    [{ ...base, action_type: 'extend_expiry', action_config: { hours: 8761 } }, 'action_config.hours'],
    [{ ...base, action_type: 'extend_expiry', action_config: { days: 365, hours: 1 } }, 'action_config.days'],
    [{ ...base, action_type: 'email_recipient', action_config: { subject: long(201) } }, 'action_config.subject'],
    [{ ...base, action_type: 'email_recipient', action_config: { subject: 'a\r\nBcc: x' } }, 'action_config.subject'],
    [{ ...base, action_type: 'email_workspace', action_config: { body: long(5001) } }, 'action_config.body'],
    [{ ...base, action_type: 'email_workspace', action_config: { body: 'a\u0000b' } }, 'action_config.body'],
    // Unknown members of action_config.
    [{ ...base, action_config: { colour: 'blue' } }, 'action_config.colour'],
    [{ ...base, action_type: 'tag_transfer', action_config: { tag: 'x', days: 1 } }, 'action_config.days'],
    [
      { ...base, action_type: 'webhook', action_config: { url: 'https://hooks.example.com/', secret: 's' } },
      'action_config.secret',
    ],
    // Conditions: unknown keys and invalid values.
    [{ ...base, trigger_conditions: { colour: 'blue' } }, 'trigger_conditions.colour'],
    [{ ...base, trigger_conditions: { min_files: 0 } }, 'trigger_conditions.min_files'],
    [{ ...base, trigger_conditions: { min_files: 1.5 } }, 'trigger_conditions.min_files'],
    [{ ...base, trigger_conditions: { encryption_mode: 'rot13' } }, 'trigger_conditions.encryption_mode'],
    [{ ...base, trigger_conditions: { status: 'gone' } }, 'trigger_conditions.status'],
    [{ ...base, trigger_conditions: { recipient_email: 'nope' } }, 'trigger_conditions.recipient_email'],
    [{ ...base, trigger_conditions: { country_code: 'FRA' } }, 'trigger_conditions.country_code'],
    [{ ...base, trigger_conditions: { country_code: null } }, 'trigger_conditions.country_code'],
  ];
  for (const [body, param] of cases) {
    const response = await create(ws.keys.live, body);
    t.is(response.status, 400, `${JSON.stringify(body).slice(0, 200)}: ${response.text}`);
    t.is(response.body.error.code, 'validation_error');
    t.is(response.body.error.param, param, JSON.stringify(body).slice(0, 200));
  }
});

test('private, loopback and metadata targets are refused', async (t) => {
  const targets = [
    'https://10.0.0.8/x',
    'https://127.0.0.1/x',
    'http://localhost:8080/x',
    'https://[::1]/x',
    'https://169.254.169.254/latest/meta-data',
  ];
  for (const url of targets) {
    for (const [actionType, member] of [
      ['webhook', 'url'],
      ['trigger_webhook', 'url'],
      ['slack_notify', 'webhook_url'],
    ] as const) {
      const response = await create(ws.keys.live, {
        ...base,
        action_type: actionType,
        action_config: { [member]: url },
      });
      t.is(response.status, 400, `${actionType} ${url}`);
      t.is(response.body.error.param, `action_config.${member}`);
      t.regex(response.body.error.message, /cannot be called/);
    }
  }
});

test('trigger_conditions that are not an object become null; objects are normalised', async (t) => {
  for (const conditions of ['x', 5, true, [], [{ min_files: 1 }], null]) {
    const created = await create(ws.keys.live, { ...base, trigger_conditions: conditions });
    t.is(created.status, 201, JSON.stringify(conditions));
    t.is(created.body.trigger_conditions, null, JSON.stringify(conditions));
  }
  const created = await create(ws.keys.live, {
    ...base,
    trigger_conditions: {
      encryption_mode: 'e2e',
      min_files: 3,
      status: 'active',
      recipient_email: '  Bob@Example.COM ',
      country_code: 'fr',
    },
  });
  t.is(created.status, 201, created.text);
  t.deepEqual(created.body.trigger_conditions, {
    encryption_mode: 'e2e',
    min_files: 3,
    status: 'active',
    recipient_email: 'bob@example.com',
    country_code: 'FR',
  });
  const empty = await create(ws.keys.live, { ...base, trigger_conditions: {} });
  t.deepEqual(empty.body.trigger_conditions, {});
});

test('name and description are trimmed; an empty description becomes null', async (t) => {
  const trimmed = await create(ws.keys.live, { ...base, name: '  Archive  ', description: '  Old ones  ' });
  t.is(trimmed.status, 201, trimmed.text);
  t.is(trimmed.body.name, 'Archive');
  t.is(trimmed.body.description, 'Old ones');
  for (const description of ['', '   ', null]) {
    const created = await create(ws.keys.live, { ...base, description });
    t.is(created.status, 201);
    t.is(created.body.description, null);
  }
  const disabled = await create(ws.keys.live, { ...base, is_enabled: false });
  t.false(disabled.body.is_enabled);
});

test('webhook rules get a whsec_ secret once; it is stored sealed and never listed', async (t) => {
  const created = await create(ws.keys.live, {
    ...base,
    action_type: 'webhook',
    action_config: { url: 'https://hooks.example.com/secret' },
  });
  t.is(created.status, 201, created.text);
  const { secret, id } = created.body;
  t.regex(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.deepEqual(created.body.action_config, { url: 'https://hooks.example.com/secret' });
  const row = await createRuleQueries(api.services.db).find(tenant(ws), id);
  t.truthy(row?.secret_sealed);
  t.false(row?.secret_sealed?.includes(secret));
  t.is(row && ruleSigningSecret(api.services, row), secret);

  const fetched = await api.call('GET', `/v1/rules/${id}`, { key: ws.keys.live });
  t.is(fetched.status, 200);
  t.false('secret' in fetched.body);
  const list = await api.call('GET', '/v1/rules?limit=100', { key: ws.keys.live });
  t.false(list.text.includes(secret));
  const renamed = await api.call('PATCH', `/v1/rules/${id}`, { key: ws.keys.live, body: { name: 'Renamed' } });
  t.false('secret' in renamed.body);
  // Switching to another webhook action keeps the secret (and the url).
  const switched = await api.call('PATCH', `/v1/rules/${id}`, {
    key: ws.keys.live,
    body: { action_type: 'trigger_webhook' },
  });
  t.is(switched.status, 200, switched.text);
  t.deepEqual(switched.body.action_config, { url: 'https://hooks.example.com/secret' });
  t.false('secret' in switched.body);
});

test('a PATCH to a webhook action creates the secret of a rule that had none, once', async (t) => {
  const created = await create(ws.keys.live, { ...base, action_type: 'tag_transfer', action_config: { tag: 'x' } });
  t.false('secret' in created.body);
  const id = created.body.id;
  const toWebhook = await api.call('PATCH', `/v1/rules/${id}`, {
    key: ws.keys.live,
    body: { action_type: 'webhook', action_config: { url: 'https://hooks.example.com/late' } },
  });
  t.is(toWebhook.status, 200, toWebhook.text);
  t.regex(toWebhook.body.secret, /^whsec_/);
  t.deepEqual(toWebhook.body.action_config, { url: 'https://hooks.example.com/late' });
  // Away and back: the rule still has its secret, so none is shown again.
  const away = await api.call('PATCH', `/v1/rules/${id}`, {
    key: ws.keys.live,
    body: { action_type: 'archive_transfer' },
  });
  t.is(away.status, 200, away.text);
  t.deepEqual(away.body.action_config, {});
  const back = await api.call('PATCH', `/v1/rules/${id}`, {
    key: ws.keys.live,
    body: { action_type: 'webhook', action_config: { url: 'https://hooks.example.com/back' } },
  });
  t.is(back.status, 200, back.text);
  t.false('secret' in back.body);
  const row = await createRuleQueries(api.services.db).find(tenant(ws), id);
  t.is(row && ruleSigningSecret(api.services, row), toWebhook.body.secret);
});

test('Idempotency-Key replays a creation and refuses a different body with 409', async (t) => {
  const headers = { 'Idempotency-Key': `rule-${randomBytes(6).toString('hex')}` };
  const body = { ...base, action_type: 'webhook', action_config: { url: 'https://hooks.example.com/idem' } };
  const first = await create(ws.keys.live, body, headers);
  t.is(first.status, 201, first.text);
  const replay = await create(ws.keys.live, body, headers);
  t.is(replay.status, 201);
  t.is(replay.headers.get('x-service-idempotent-replay'), 'true');
  t.is(replay.body.id, first.body.id);
  const conflict = await create(ws.keys.live, { ...body, name: 'Another' }, headers);
  t.is(conflict.status, 409);
  t.is(conflict.body.error.code, 'idempotency_conflict');
  const list = await api.call('GET', '/v1/rules?limit=100', { key: ws.keys.live });
  t.is(list.body.data.filter((r: { id: string }) => r.id === first.body.id).length, 1);
});

test('lists page newest first with cursors, and filter by trigger_event and is_enabled', async (t) => {
  const own = await api.workspace('Rule lists');
  const key = own.keys.live;
  const rules: Array<{ id: string; created_at: string; trigger_event: string; is_enabled: boolean }> = [];
  const specs = [
    { trigger_event: 'transfer.created', is_enabled: true },
    { trigger_event: 'api_key.created', is_enabled: true },
    { trigger_event: 'transfer.created', is_enabled: false },
    { trigger_event: 'api_key.created', is_enabled: false },
    { trigger_event: 'transfer.created', is_enabled: true },
  ];
  for (const [i, spec] of specs.entries()) {
    const created = await create(key, { ...base, name: `R${i}`, ...spec });
    t.is(created.status, 201, created.text);
    rules.push(created.body);
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const page = await api.call('GET', `/v1/rules?limit=2${query}`, { key });
    t.is(page.status, 200, page.text);
    t.is(page.body.object, 'list');
    t.is(page.body.limit, 2);
    t.is(page.body.offset, cursor === null ? 0 : null);
    seen.push(...idsOf(page));
    cursor = page.body.next_cursor;
    t.is(page.body.has_more, cursor !== null);
    pages++;
  } while (cursor !== null && pages < 10);
  t.is(pages, 3);
  t.deepEqual(seen, newestFirst(rules));

  const apiKeyRules = await api.call('GET', '/v1/rules?trigger_event=api_key.created', { key });
  t.deepEqual(idsOf(apiKeyRules), newestFirst(rules.filter((r) => r.trigger_event === 'api_key.created')));
  const disabled = await api.call('GET', '/v1/rules?is_enabled=false', { key });
  t.deepEqual(idsOf(disabled), newestFirst(rules.filter((r) => !r.is_enabled)));
  const wanted = newestFirst(rules.filter((r) => r.is_enabled && r.trigger_event === 'transfer.created'));
  const both = await api.call('GET', '/v1/rules?is_enabled=true&trigger_event=transfer.created&limit=1', { key });
  t.deepEqual(idsOf(both), wanted.slice(0, 1));
  t.true(both.body.has_more);
  const next = await api.call(
    'GET',
    `/v1/rules?is_enabled=true&trigger_event=transfer.created&limit=1&cursor=${encodeURIComponent(both.body.next_cursor)}`,
    { key },
  );
  t.deepEqual(idsOf(next), wanted.slice(1));
  t.false(next.body.has_more);
  // A cursor is bound to its filters.
  const wrong = await api.call(
    'GET',
    `/v1/rules?is_enabled=false&cursor=${encodeURIComponent(both.body.next_cursor)}`,
    {
      key,
    },
  );
  t.is(wrong.status, 400);
  t.is(wrong.body.error.param, 'cursor');
  const badFilter = await api.call('GET', '/v1/rules?trigger_event=transfer.teleported', { key });
  t.is(badFilter.status, 400);
  t.is(badFilter.body.error.param, 'trigger_event');
  const clamped = await api.call('GET', '/v1/rules?limit=1000', { key });
  t.is(clamped.body.limit, 100);
});

test('GET fetches a rule; unknown ids are 404 and malformed ids 400', async (t) => {
  const created = await create(ws.keys.live, {
    ...base,
    action_type: 'webhook',
    action_config: { url: 'https://hooks.example.com/get' },
    trigger_conditions: { min_files: 2 },
  });
  const fetched = await api.call('GET', `/v1/rules/${created.body.id}`, { key: ws.keys.live });
  t.is(fetched.status, 200, fetched.text);
  const { secret: _secret, ...withoutSecret } = created.body;
  t.deepEqual(fetched.body, withoutSecret);
  const unknown = await api.call('GET', '/v1/rules/00000000-0000-4000-8000-000000000000', { key: ws.keys.live });
  t.is(unknown.status, 404);
  t.is(unknown.body.error.code, 'not_found');
  const malformed = await api.call('GET', '/v1/rules/not-a-uuid', { key: ws.keys.live });
  t.is(malformed.status, 400);
  t.is(malformed.body.error.param, 'id');
});

test('PATCH changes any field, keeps the rule valid, and replaces action_config', async (t) => {
  const created = await create(ws.keys.live, { ...base, action_type: 'tag_transfer', action_config: { tag: 'a' } });
  const id = created.body.id;
  const patch = (body: unknown) => api.call('PATCH', `/v1/rules/${id}`, { key: ws.keys.live, body });

  const disabled = await patch({ is_enabled: false });
  t.is(disabled.status, 200, disabled.text);
  t.false(disabled.body.is_enabled);
  t.is(disabled.body.name, 'Rule');
  t.deepEqual(disabled.body.action_config, { tag: 'a' });
  t.true(Date.parse(disabled.body.updated_at) >= Date.parse(created.body.updated_at));
  t.is(disabled.body.created_at, created.body.created_at);

  const changed = await patch({
    name: '  Tagger ',
    description: ' tags ',
    trigger_event: 'transfer.downloaded',
    trigger_conditions: { country_code: 'de' },
    action_config: { tag: 'b' },
    is_enabled: true,
  });
  t.is(changed.status, 200, changed.text);
  t.like(changed.body, {
    name: 'Tagger',
    description: 'tags',
    trigger_event: 'transfer.downloaded',
    trigger_conditions: { country_code: 'DE' },
    action_type: 'tag_transfer',
    action_config: { tag: 'b' },
    is_enabled: true,
  });
  // tag_transfer to untag_transfer keeps the tag; conditions that are not an object clear them.
  const untag = await patch({ action_type: 'untag_transfer', trigger_conditions: 'none', description: '' });
  t.is(untag.status, 200, untag.text);
  t.deepEqual(untag.body.action_config, { tag: 'b' });
  t.is(untag.body.trigger_conditions, null);
  t.is(untag.body.description, null);

  const invalid: Array<[unknown, string | null]> = [
    [{ action_type: 'extend_expiry' }, 'action_config.hours'],
    [{ action_type: 'webhook' }, 'action_config.url'],
    [{ action_config: {} }, 'action_config.tag'],
    [{ action_config: { tag: 'x', colour: 'red' } }, 'action_config.colour'],
    [{ name: '   ' }, 'name'],
    [{ trigger_event: 'transfer.teleported' }, 'trigger_event'],
    [{ action_type: 'send_fax' }, 'action_type'],
    [{ trigger_conditions: { colour: 'red' } }, 'trigger_conditions.colour'],
    [{ id }, 'id'],
    [{}, null],
  ];
  for (const [body, param] of invalid) {
    const response = await patch(body);
    t.is(response.status, 400, `${JSON.stringify(body)}: ${response.text}`);
    t.is(response.body.error.code, 'validation_error');
    if (param !== null) t.is(response.body.error.param, param, JSON.stringify(body));
  }
  const unchanged = await api.call('GET', `/v1/rules/${id}`, { key: ws.keys.live });
  t.deepEqual(unchanged.body, untag.body, 'a refused PATCH changes nothing');

  const extend = await patch({ action_type: 'extend_expiry', action_config: { days: 7 } });
  t.is(extend.status, 200, extend.text);
  t.deepEqual(extend.body.action_config, { days: 7 });
  const unknown = await api.call('PATCH', '/v1/rules/00000000-0000-4000-8000-000000000000', {
    key: ws.keys.live,
    body: { is_enabled: false },
  });
  t.is(unknown.status, 404);
});

test('DELETE removes a rule for good, with its executions', async (t) => {
  const created = await create(ws.keys.live, base);
  const id = created.body.id;
  const queries = createRuleQueries(api.services.db);
  const row = await queries.find(tenant(ws), id);
  if (!row) throw new Error('rule not stored');
  const execution = await queries.startExecution(row, { id: eventId(), type: 'transfer.created' });
  t.truthy(execution);
  const removed = await api.call('DELETE', `/v1/rules/${id}`, { key: ws.keys.live });
  t.is(removed.status, 200, removed.text);
  t.deepEqual(removed.body, { id, object: 'rule', deleted: true });
  t.is(await queries.findExecution(execution?.id ?? ''), null, 'executions go with the rule');
  for (const [method, path] of [
    ['DELETE', `/v1/rules/${id}`],
    ['GET', `/v1/rules/${id}`],
    ['PATCH', `/v1/rules/${id}`],
    ['GET', `/v1/rules/${id}/executions`],
  ] as const) {
    const response = await api.call(method, path, {
      key: ws.keys.live,
      ...(method === 'PATCH' ? { body: { is_enabled: true } } : {}),
    });
    t.is(response.status, 404, `${method} ${path}`);
    t.is(response.body.error.code, 'not_found');
  }
  const audit = await api.call('GET', '/v1/audit?action=rule.delete&limit=5', { key: ws.keys.live });
  t.true(audit.body.data.some((e: { resource_id: string; status: string }) => e.resource_id === id));
});

test('executions list newest first, page, and feed the rule counters', async (t) => {
  const created = await create(ws.keys.live, { ...base, name: 'Counted' });
  const id = created.body.id;
  const empty = await api.call('GET', `/v1/rules/${id}/executions`, { key: ws.keys.live });
  t.is(empty.status, 200, empty.text);
  t.deepEqual(empty.body, { object: 'list', data: [], has_more: false, next_cursor: null, limit: 20, offset: 0 });

  const queries = createRuleQueries(api.services.db);
  const row = await queries.find(tenant(ws), id);
  if (!row) throw new Error('rule not stored');
  const events = [eventId(), eventId(), eventId()];
  const started = [];
  for (const event of events) {
    const execution = await queries.startExecution(row, { id: event, type: 'transfer.created' });
    if (!execution) throw new Error('execution not started');
    t.is(execution.status, 'running');
    t.is(execution.attempts, 1);
    started.push(execution);
  }
  const [first, second, third] = started;
  if (!first || !second || !third) throw new Error('missing executions');
  const done = await queries.finishExecution(first.id, { status: 'succeeded', durationMs: 12.4 });
  t.is(done?.status, 'succeeded');
  t.is(done?.duration_ms, 12);
  t.truthy(done?.completed_at);
  await queries.finishExecution(second.id, { status: 'failed', error: 'receiver answered 500', durationMs: 30 });
  await queries.finishExecution(third.id, { status: 'skipped' });
  t.is(
    await queries.finishExecution(first.id, { status: 'failed' }),
    null,
    'a finished execution is not finished again',
  );

  let rule = await api.call('GET', `/v1/rules/${id}`, { key: ws.keys.live });
  t.is(rule.body.trigger_count, 2, 'succeeded and failed count, skipped does not');
  t.truthy(rule.body.last_triggered_at);

  // Once per (rule, event): a succeeded one is not run again; a failed one is retried and counted once.
  t.is(await queries.startExecution(row, { id: events[0] ?? '', type: 'transfer.created' }), null);
  const retry = await queries.startExecution(row, { id: events[1] ?? '', type: 'transfer.created' });
  t.is(retry?.id, second.id);
  t.is(retry?.attempts, 2);
  t.is(retry?.status, 'running');
  t.is(retry?.error, null);
  await queries.finishExecution(second.id, { status: 'succeeded', durationMs: 5 });
  rule = await api.call('GET', `/v1/rules/${id}`, { key: ws.keys.live });
  t.is(rule.body.trigger_count, 2);
  const enabled = await queries.findEnabledForEvent(tenant(ws), 'transfer.created');
  t.true(enabled.some((r) => r.id === id));
  t.false((await queries.findEnabledForEvent(tenant(ws, 'test'), 'transfer.created')).some((r) => r.id === id));

  const page1 = await api.call('GET', `/v1/rules/${id}/executions?limit=2`, { key: ws.keys.live });
  t.is(page1.status, 200, page1.text);
  t.true(page1.body.has_more);
  const page2 = await api.call(
    'GET',
    `/v1/rules/${id}/executions?limit=2&cursor=${encodeURIComponent(page1.body.next_cursor)}`,
    { key: ws.keys.live },
  );
  t.false(page2.body.has_more);
  const listed = [...page1.body.data, ...page2.body.data];
  t.deepEqual(
    listed.map((e: { id: string }) => e.id),
    newestFirst(started),
  );
  const byId = (executionId: string) => listed.find((e: { id: string }) => e.id === executionId);
  t.deepEqual(Object.keys(byId(second.id)).sort(), [
    'attempts',
    'completed_at',
    'created_at',
    'duration_ms',
    'error',
    'event_id',
    'event_type',
    'id',
    'object',
    'rule_id',
    'status',
  ]);
  t.like(byId(second.id), {
    object: 'rule_execution',
    rule_id: id,
    event_id: events[1],
    event_type: 'transfer.created',
    status: 'succeeded',
    attempts: 2,
    duration_ms: 5,
  });
  t.like(byId(third.id), { status: 'skipped', error: null, duration_ms: null });
  t.like(byId(first.id), { status: 'succeeded', duration_ms: 12 });

  // A cursor of one rule's executions is refused on another's.
  const another = await create(ws.keys.live, base);
  const foreign = await api.call(
    'GET',
    `/v1/rules/${another.body.id}/executions?cursor=${encodeURIComponent(page1.body.next_cursor)}`,
    { key: ws.keys.live },
  );
  t.is(foreign.status, 400);
  t.is(foreign.body.error.param, 'cursor');
});

test('rules of another workspace or environment are 404', async (t) => {
  const created = await create(ws.keys.live, base);
  const id = created.body.id;
  for (const key of [other.keys.live, ws.keys.test, ws.keys.sandbox]) {
    for (const [method, path] of [
      ['GET', `/v1/rules/${id}`],
      ['PATCH', `/v1/rules/${id}`],
      ['DELETE', `/v1/rules/${id}`],
      ['GET', `/v1/rules/${id}/executions`],
    ] as const) {
      const response = await api.call(method, path, { key, ...(method === 'PATCH' ? { body: { name: 'x' } } : {}) });
      t.is(response.status, 404, `${method} ${path}`);
      t.is(response.body.error.code, 'not_found');
    }
    const list = await api.call('GET', '/v1/rules?limit=100', { key });
    t.false(list.body.data.some((r: { id: string }) => r.id === id));
  }
  const still = await api.call('GET', `/v1/rules/${id}`, { key: ws.keys.live });
  t.is(still.body.name, 'Rule');
});

test('scopes: transfers:read reads rules, transfers:manage is needed to change them', async (t) => {
  const created = await create(ws.keys.live, base);
  const id = created.body.id;
  const reader = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'rule reader', key_type: 'restricted', scopes: ['transfers:read', 'transfers:write'] },
  });
  t.is(reader.status, 201, reader.text);
  t.is((await api.call('GET', '/v1/rules', { key: reader.body.key })).status, 200);
  t.is((await api.call('GET', `/v1/rules/${id}`, { key: reader.body.key })).status, 200);
  t.is((await api.call('GET', `/v1/rules/${id}/executions`, { key: reader.body.key })).status, 200);
  for (const [method, path, body] of [
    ['POST', '/v1/rules', base],
    ['PATCH', `/v1/rules/${id}`, { is_enabled: false }],
    ['DELETE', `/v1/rules/${id}`, undefined],
  ] as const) {
    const denied = await api.call(method, path, { key: reader.body.key, ...(body ? { body } : {}) });
    t.is(denied.status, 403, `${method} ${path}`);
    t.is(denied.body.error.code, 'scope_missing');
    t.is(denied.body.error.required_scope, 'transfers:manage');
  }
  const hooks = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'hooks only', key_type: 'restricted', scopes: ['webhooks:read'] },
  });
  const noRead = await api.call('GET', '/v1/rules', { key: hooks.body.key });
  t.is(noRead.status, 403);
  t.is(noRead.body.error.code, 'scope_missing');
  const manager = await api.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'rule manager', key_type: 'restricted', scopes: ['transfers:manage'] },
  });
  t.is((await create(manager.body.key, base)).status, 201);
});

test('the 101st rule of an environment is refused', async (t) => {
  const own = await api.workspace('Busy rules');
  const queries = createRuleQueries(api.services.db);
  for (let i = 0; i < 100; i++) {
    await queries.insert(tenant(own), {
      name: `R${i}`,
      description: null,
      triggerEvent: 'transfer.created',
      triggerConditions: null,
      actionType: 'archive_transfer',
      actionConfig: {},
      secretSealed: null,
      isEnabled: true,
    });
  }
  const refused = await create(own.keys.live, base);
  t.is(refused.status, 400);
  t.is(refused.body.error.code, 'validation_error');
  t.regex(refused.body.error.message, /100/);
  t.is((await create(own.keys.test, base)).status, 201);
});
