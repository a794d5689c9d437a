import { readFile } from 'node:fs/promises';
import test from 'ava';
import { connectTemporal } from '../lib/temporal.ts';
import { VALISE_SEARCH_ATTRIBUTES } from '../lib/temporal-search-attributes.ts';
import { eventually, startApi, type TestApi } from './helpers/api.ts';
import { type Receiver, startReceiver } from './helpers/receiver.ts';
import { createTransfer } from './helpers/transfers.ts';

// Operators find a workspace's workflows in the Temporal UI by its search attributes
// (docs/operations.md, "Finding a workspace's workflows"): real work started through the API, then
// the visibility query an operator types, through the official Temporal client.

let api: TestApi;
let receiver: Receiver;
let temporal: Awaited<ReturnType<typeof connectTemporal>>;

test.before(async () => {
  api = await startApi();
  receiver = await startReceiver({ tls: true });
  temporal = await connectTemporal(api.services.config);
});
test.after.always(async () => {
  await temporal?.connection.close();
  await receiver?.close();
  await api?.close();
});

type Listed = { workflowId: string; type: string; environment: unknown; resourceType: unknown; resourceId: unknown };

async function listWorkflows(query: string): Promise<Listed[]> {
  const listed: Listed[] = [];
  for await (const workflow of temporal.workflow.list({ query })) {
    const attributes = workflow.typedSearchAttributes;
    listed.push({
      workflowId: workflow.workflowId,
      type: workflow.type,
      environment: attributes.get(VALISE_SEARCH_ATTRIBUTES.environment),
      resourceType: attributes.get(VALISE_SEARCH_ATTRIBUTES.resourceType),
      resourceId: attributes.get(VALISE_SEARCH_ATTRIBUTES.resourceId),
    });
  }
  return listed.sort((a, b) => a.workflowId.localeCompare(b.workflowId));
}

test("a workspace's id finds exactly its workflows: its transfer's, its webhook delivery's and its intake's", async (t) => {
  const ws = await api.workspace('Searched');
  const other = await api.workspace('Not searched');

  const transfer = await createTransfer(api, ws.keys.live, { files: [{ name: 'a.txt', size: 10 }] });
  const hook = await api.call('POST', '/v1/webhooks', {
    key: ws.keys.test,
    body: { url: receiver.url('/hook'), events: ['transfer.created'] },
  });
  t.is(hook.status, 201, hook.text);
  const ping = await api.call('POST', `/v1/webhooks/${hook.body.id}/test`, { key: ws.keys.test });
  t.is(ping.status, 200, ping.text);
  const intake = await api.call('POST', '/v1/intakes', {
    key: ws.keys.live,
    body: { title: 'Contracts', expires_in_hours: 2 },
  });
  t.is(intake.status, 201, intake.text);
  // The other workspace's work must not come back.
  await createTransfer(api, other.keys.live, { files: [{ name: 'b.txt', size: 10 }] });

  const expected = [
    { type: 'transferLifecycle', environment: 'live', resourceType: 'transfer', resourceId: transfer.transfer.id },
    { type: 'deliverWebhook', environment: 'test', resourceType: 'webhook', resourceId: hook.body.id },
    { type: 'ownerExpiry', environment: 'live', resourceType: 'intake', resourceId: intake.body.id },
  ];
  const byResource = (a: { resourceType: unknown }, b: { resourceType: unknown }) =>
    String(a.resourceType).localeCompare(String(b.resourceType));
  // Visibility is updated shortly after each start.
  const found = await eventually(async () => {
    const listed = await listWorkflows(`ValiseWorkspaceId = '${ws.workspace_id}'`);
    return listed.length >= expected.length ? listed : undefined;
  });
  t.deepEqual(found.map(({ workflowId: _, ...labels }) => labels).sort(byResource), [...expected].sort(byResource));

  // The other attributes narrow it down, as an operator would.
  const transfers = await listWorkflows(
    `ValiseWorkspaceId = '${ws.workspace_id}' AND ValiseEnvironment = 'live' AND ValiseResourceType = 'transfer'`,
  );
  t.deepEqual(
    transfers.map((workflow) => workflow.resourceId),
    [transfer.transfer.id],
  );
  const byId = await listWorkflows(`ValiseResourceId = '${intake.body.id}'`);
  t.deepEqual(
    byId.map((workflow) => workflow.workflowId),
    [`intake-${intake.body.id}`],
  );

  // Each carries a summary an operator reads in the UI's list.
  const description = await temporal.workflow.getHandle(`transfer-${transfer.transfer.id}`).describe();
  t.is(await description.staticSummary(), `transfer ${transfer.transfer.id} of workspace ${ws.workspace_id} (live)`);
});

test("a rule's runs, started by the worker's outbox relay, carry the rule's workspace and id", async (t) => {
  const ws = await api.workspace('Ruled');
  const rule = await api.call('POST', '/v1/rules', {
    key: ws.keys.live,
    body: { name: 'Archive at once', trigger_event: 'transfer.created', action_type: 'archive_transfer' },
  });
  t.is(rule.status, 201, rule.text);
  const transfer = await createTransfer(api, ws.keys.live, { files: [{ name: 'a.txt', size: 10 }] });
  const runs = await eventually(async () => {
    const listed = await listWorkflows(`ValiseWorkspaceId = '${ws.workspace_id}' AND ValiseResourceType = 'rule'`);
    return listed.length > 0 ? listed : undefined;
  }, 30_000);
  t.deepEqual(
    runs.map(({ workflowId: _, ...labels }) => labels),
    [{ type: 'runRule', environment: 'live', resourceType: 'rule', resourceId: rule.body.id }],
  );
  // And the transfer's own, beside it.
  await eventually(async () => {
    const all = await listWorkflows(`ValiseWorkspaceId = '${ws.workspace_id}'`);
    return all.some((workflow) => workflow.resourceId === transfer.transfer.id) ? true : undefined;
  });
  t.pass();
});

test('the Docker stack starts its dev server with every search attribute the workflows carry', async (t) => {
  const compose = await readFile(new URL('../docker-compose.yml', import.meta.url), 'utf8');
  for (const key of Object.values(VALISE_SEARCH_ATTRIBUTES)) {
    t.true(compose.includes(`--search-attribute=${key.name}=Keyword`), key.name);
  }
});
