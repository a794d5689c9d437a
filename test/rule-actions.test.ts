import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { createRuleQueries } from '../lib/db/queries/rules.ts';
import { ruleRunWorkflowId } from '../lib/rules/plan.ts';
import { connectTemporal } from '../lib/temporal.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { eventsDispatched, workflowStarted } from './helpers/dispatch.ts';
import { mailsTo, uniqueAddress, waitForMail } from './helpers/mail.ts';
import { startReceiver } from './helpers/receiver.ts';
import { content, createTransfer, put, waitForTransfer } from './helpers/transfers.ts';

// Every rule action, run by the real worker on a real event, has its effect:
// a signed POST, a Slack-shaped POST, a mail in the SMTP capture, a tag, a
// later expiry the transfer's workflow honours, an archived transfer.

let api: TestApi;
test.before(async () => {
  api = await startApi();
});
test.after.always(() => api.close());

async function rule(ws: TestWorkspace, body: Record<string, unknown>) {
  const created = await api.call('POST', '/v1/rules', { key: ws.keys.live, body: { name: 'rule', ...body } });
  if (created.status !== 201) throw new Error(`rule: ${created.status} ${created.text}`);
  return created.body as { id: string; secret?: string };
}

async function executions(ws: TestWorkspace, ruleId: string) {
  return eventually(async () => {
    const list = await api.call('GET', `/v1/rules/${ruleId}/executions`, { key: ws.keys.live });
    const finished = (list.body.data as any[]).filter((e) => e.status !== 'running');
    return finished.length > 0 ? finished : undefined;
  }, 30_000);
}

const transferOf = async (ws: TestWorkspace, id: string) =>
  (await api.call('GET', `/v1/transfers/${id}`, { key: ws.keys.live })).body;

test('webhook and trigger_webhook: a signed POST of the event, verified with the rule secret', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  const ws = await api.workspace('Rule webhook');
  const hook = await rule(ws, {
    trigger_event: 'transfer.created',
    action_type: 'webhook',
    action_config: { url: receiver.url('/a') },
  });
  await rule(ws, {
    trigger_event: 'transfer.created',
    action_type: 'trigger_webhook',
    action_config: { url: receiver.url('/b') },
  });
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'a.txt', size: 1 }] });

  const delivered = await eventually(async () => receiver.received.find((r) => r.path === '/a'));
  const headers = Object.fromEntries(Object.entries(delivered.headers).map(([k, v]) => [k, String(v)]));
  const body = new Webhook(hook.secret ?? '').verify(delivered.body, headers) as any;
  t.is(body.type, 'transfer.created');
  t.is(body.data.transfer.id, created.transfer.id);
  await eventually(async () => (receiver.received.some((r) => r.path === '/b') ? true : undefined));

  const [execution] = await executions(ws, hook.id);
  t.like(execution, { object: 'rule_execution', status: 'succeeded', event_type: 'transfer.created', error: null });
  t.true(execution.duration_ms >= 0);
  const after = await api.call('GET', `/v1/rules/${hook.id}`, { key: ws.keys.live });
  t.is(after.body.trigger_count, 1);
  t.truthy(after.body.last_triggered_at);
});

test('slack_notify posts Slack-shaped JSON naming the transfer', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  const ws = await api.workspace('Rule slack');
  await rule(ws, {
    trigger_event: 'transfer.created',
    action_type: 'slack_notify',
    action_config: { webhook_url: receiver.url('/slack') },
  });
  const created = await createTransfer(api, ws.keys.live, {
    transfer_title: 'Board pack',
    files: [{ name: 'a.txt', size: 1 }],
  });
  const posted = await eventually(async () => receiver.received.find((r) => r.path === '/slack'));
  t.is(posted.headers['content-type'], 'application/json');
  const message = JSON.parse(posted.body);
  t.deepEqual(Object.keys(message), ['text']);
  t.regex(message.text, /Board pack/);
  t.true(message.text.includes(created.transfer.short_code));
});

test('email_recipient and email_workspace send mail, with placeholders filled in', async (t) => {
  const ws = await api.workspace('Rule mail');
  const recipient = uniqueAddress('rule-recipient');
  await rule(ws, {
    trigger_event: 'transfer.created',
    action_type: 'email_recipient',
    action_config: { subject: 'Incoming: {{transfer.title}}', body: 'Code {{transfer.short_code}} ({{event.type}})' },
  });
  await rule(ws, { trigger_event: 'transfer.created', action_type: 'email_workspace' });
  const created = await createTransfer(api, ws.keys.live, {
    transfer_title: 'Quarterly',
    recipient,
    files: [{ name: 'a.txt', size: 1 }],
  });
  const toRecipient = await waitForMail(recipient, /^Incoming: Quarterly$/);
  t.true(toRecipient.text.includes(`Code ${created.transfer.short_code} (transfer.created)`));
  const owner = (await api.call('GET', '/v1/me', { key: ws.keys.live })).body;
  const ownerEmail = owner.user?.email ?? owner.email;
  const toOwner = await waitForMail(ownerEmail, /Quarterly/);
  t.regex(toOwner.text, /automation rule/);

  // Without a recipient the action cannot run: the execution says why.
  const ws2 = await api.workspace('Rule mail, nobody');
  const lonely = await rule(ws2, { trigger_event: 'transfer.created', action_type: 'email_recipient' });
  await createTransfer(api, ws2.keys.live, { files: [{ name: 'a.txt', size: 1 }] });
  const [failed] = await executions(ws2, lonely.id);
  t.like(failed, { status: 'failed', error: 'the transfer has no recipient to mail' });
  t.is((await api.call('GET', `/v1/rules/${lonely.id}`, { key: ws2.keys.live })).body.trigger_count, 1);
});

test('tag_transfer and untag_transfer change the tags the transfer shows, and the list filters by tag', async (t) => {
  const ws = await api.workspace('Rule tags');
  await rule(ws, {
    trigger_event: 'transfer.created',
    action_type: 'tag_transfer',
    action_config: { tag: 'needs-review' },
  });
  await rule(ws, {
    trigger_event: 'transfer.approved',
    action_type: 'untag_transfer',
    action_config: { tag: 'needs-review' },
  });
  await rule(ws, {
    trigger_event: 'transfer.approved',
    action_type: 'tag_transfer',
    action_config: { tag: 'reviewed' },
  });
  const bytes = content(1024);
  const created = await createTransfer(api, ws.keys.live, {
    approval_required: true,
    files: [{ name: 'a.bin', size: bytes.length }],
  });
  const id = created.transfer.id;
  await eventually(async () => ((await transferOf(ws, id)).tags.includes('needs-review') ? true : undefined));
  const tagged = await api.call('GET', '/v1/transfers?tag=needs-review', { key: ws.keys.live });
  t.deepEqual(
    tagged.body.data.map((tr: any) => tr.id),
    [id],
  );

  await put(created.upload_urls[0]?.url ?? '', bytes);
  await waitForTransfer(api, ws.keys.live, id, (tr) => tr.status === 'active');
  const approved = await api.call('POST', `/v1/transfers/${id}/approve`, {
    key: ws.keys.live,
    body: { decision: 'approved' },
  });
  t.is(approved.status, 200, approved.text);
  const after = await eventually(async () => {
    const tr = await transferOf(ws, id);
    return tr.tags.includes('reviewed') && !tr.tags.includes('needs-review') ? tr : undefined;
  });
  t.deepEqual(after.tags, ['reviewed']);
});

test('extend_expiry moves expires_at, and the transfer workflow keeps the transfer past its old expiry', async (t) => {
  const ws = await api.workspace('Rule expiry');
  const extend = await rule(ws, {
    trigger_event: 'transfer.created',
    action_type: 'extend_expiry',
    action_config: { hours: 10 / 3600 },
  });
  const bytes = content(512);
  const created = await createTransfer(api, ws.keys.live, {
    expires_in_hours: 6 / 3600,
    files: [{ name: 'a.bin', size: bytes.length }],
  });
  const id = created.transfer.id;
  // From the creation response: the rule may have run before any later read.
  const original = Date.parse(created.transfer.expires_at);
  const extended = await eventually(async () => {
    const tr = await transferOf(ws, id);
    return Date.parse(tr.expires_at) > original ? tr : undefined;
  });
  t.is(Date.parse(extended.expires_at) - original, 10_000);
  await put(created.upload_urls[0]?.url ?? '', bytes);
  await waitForTransfer(api, ws.keys.live, id, (tr) => tr.status === 'active');
  await waitForTransfer(api, ws.keys.live, id, (tr) => tr.status === 'expired', 40_000);
  // When it expired, as the workflow recorded it: at the extended deadline, so the timer moved.
  const [expiredEvent] = (
    await createEventQueries(api.services.db).listByType(
      { workspaceId: ws.workspace_id, environment: 'live' },
      'transfer.expired',
    )
  ).filter((e) => (e.data.transfer as { id: string }).id === id);
  t.true(
    (expiredEvent?.created_at.getTime() ?? 0) >= Date.parse(extended.expires_at),
    `expired at ${expiredEvent?.created_at.toISOString()}, extended to ${extended.expires_at}`,
  );

  const temporal = await connectTemporal(api.services.config);
  t.teardown(() => temporal.connection.close());
  const history = await temporal.workflow.getHandle(`transfer-${id}`).fetchHistory();
  const signals = (history.events ?? []).map((e) => e.workflowExecutionSignaledEventAttributes?.signalName);
  t.true(signals.includes('expiryExtended'), 'the transfer workflow was signalled');

  const [event] = await createEventQueries(api.services.db).listByType(
    { workspaceId: ws.workspace_id, environment: 'live' },
    'transfer.expiry_extended',
  );
  t.is(event?.data.rule_id, extend.id);
  const row = await createEventQueries(api.services.db).find(event?.id ?? '');
  t.deepEqual(row?.caused_by_rules, [extend.id], 'the event remembers the rule behind it (loop guard)');
});

test('archive_transfer hides the transfer from the default list; its link keeps working', async (t) => {
  const ws = await api.workspace('Rule archive');
  await rule(ws, {
    trigger_event: 'transfer.created',
    action_type: 'archive_transfer',
    trigger_conditions: { min_files: 2 },
  });
  const two = await createTransfer(api, ws.keys.live, {
    files: [
      { name: 'a.txt', size: 1 },
      { name: 'b.txt', size: 1 },
    ],
  });
  const one = await createTransfer(api, ws.keys.live, { files: [{ name: 'a.txt', size: 1 }] });
  const archived = await eventually(async () => {
    const tr = await transferOf(ws, two.transfer.id);
    return tr.archived_at ? tr : undefined;
  });
  t.truthy(archived.archived_at);
  const listed = await api.call('GET', '/v1/transfers', { key: ws.keys.live });
  t.deepEqual(
    listed.body.data.map((tr: any) => tr.id),
    [one.transfer.id],
    'the one-file transfer did not match min_files 2',
  );
  const onlyArchived = await api.call('GET', '/v1/transfers?archived=true', { key: ws.keys.live });
  t.deepEqual(
    onlyArchived.body.data.map((tr: any) => tr.id),
    [two.transfer.id],
  );
  t.is((await api.call('GET', `/v1/shares/${two.transfer.short_code}`)).status, 200);
});

test('conditions and switches: encryption_mode, recipient_email and is_enabled decide what runs', async (t) => {
  const receiver = await startReceiver();
  t.teardown(receiver.close);
  const ws = await api.workspace('Rule conditions');
  const recipient = uniqueAddress('Someone');
  const rules = {
    e2e: await rule(ws, {
      trigger_event: 'transfer.created',
      action_type: 'webhook',
      trigger_conditions: { encryption_mode: 'e2e' },
      action_config: { url: receiver.url('/e2e') },
    }),
    recipient: await rule(ws, {
      trigger_event: 'transfer.created',
      action_type: 'webhook',
      trigger_conditions: { recipient_email: recipient.toUpperCase() },
      action_config: { url: receiver.url('/recipient') },
    }),
    disabled: await rule(ws, {
      trigger_event: 'transfer.created',
      action_type: 'webhook',
      is_enabled: false,
      action_config: { url: receiver.url('/disabled') },
    }),
    everything: await rule(ws, {
      trigger_event: 'transfer.created',
      action_type: 'webhook',
      action_config: { url: receiver.url('/everything') },
    }),
  };
  const created = await createTransfer(api, ws.keys.live, { recipient, files: [{ name: 'a.txt', size: 1 }] });
  await eventually(async () => (receiver.received.some((r) => r.path === '/everything') ? true : undefined));
  await eventually(async () => (receiver.received.some((r) => r.path === '/recipient') ? true : undefined));
  // Dispatched: every rule run this event will ever have was started; a rule without one never runs on it.
  const [event] = (
    await createEventQueries(api.services.db).listByType(
      { workspaceId: ws.workspace_id, environment: 'live' },
      'transfer.created',
    )
  ).filter((e) => (e.data.transfer as { id: string }).id === created.transfer.id);
  if (!event) throw new Error('no transfer.created event');
  await eventsDispatched(api.services.db, [event.id]);
  const temporal = await connectTemporal(api.services.config);
  t.teardown(() => temporal.connection.close());
  for (const [name, id] of [
    ['e2e', rules.e2e.id],
    ['disabled', rules.disabled.id],
  ] as const) {
    t.false(await workflowStarted(temporal, ruleRunWorkflowId(id, event.id)), `${name}: no run was started`);
  }
  t.deepEqual(receiver.received.map((r) => r.path).sort(), ['/everything', '/recipient']);
  for (const id of [rules.e2e.id, rules.disabled.id]) {
    const list = await api.call('GET', `/v1/rules/${id}/executions`, { key: ws.keys.live });
    t.deepEqual(list.body.data, [], 'a rule that did not match records no execution');
  }
});

test('a mail rule stored with an address of its own (around the API) fails at run time and mails no one', async (t) => {
  const ws = await api.workspace('Rule mail, smuggled address');
  const attacker = uniqueAddress('attacker');
  const recipient = uniqueAddress('rule-recipient');
  // The API refuses such a config (test/rules-scopes.test.ts); this row is written straight to the table.
  const smuggled = await createRuleQueries(api.services.db).insert(
    { workspaceId: ws.workspace_id, environment: 'live' },
    {
      name: 'smuggled',
      description: null,
      triggerEvent: 'transfer.created',
      triggerConditions: null,
      actionType: 'email_recipient',
      actionConfig: { subject: 'Smuggled', body: 'Free text', to: attacker },
      secretSealed: null,
      isEnabled: true,
    },
  );
  await createTransfer(api, ws.keys.live, { recipient, files: [{ name: 'a.txt', size: 1 }] });
  // The execution is final once the action ran or was refused: a mail would have been handed to SMTP before it.
  const [execution] = await executions(ws, smuggled.id);
  t.like(execution, { status: 'failed', attempts: 1 });
  t.regex(execution.error ?? '', /action_config\.to/);
  t.deepEqual(await mailsTo(attacker), [], 'nothing to the smuggled address');
  t.deepEqual(await mailsTo(recipient), [], 'nor to the recipient: the rule did not run');
});
