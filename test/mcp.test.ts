import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import test, { type ExecutionContext } from 'ava';
import { MCP_TOOLS } from '../lib/mcp/tools.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { intoFreshRateWindow } from './helpers/rate-window.ts';
import { createTransfer } from './helpers/transfers.ts';

// The hosted MCP endpoint (docs/mcp.md) through the real API: the control endpoint's every case, and
// the transport driven by the official MCP SDK's own client (Client + StreamableHTTPClientTransport),
// each tool's answer checked against the API's, scopes enforced and audited, other workspaces out of
// reach.

const EVERY_SCOPE = [...new Set(MCP_TOOLS.map((tool) => tool.requiredScope))];

let api: TestApi;
let ws: TestWorkspace;
let other: TestWorkspace;
let fullToken: string;
let fullTokenId: string;

async function issue(workspace: TestWorkspace, scopes: string[]) {
  const created = await api.call('POST', '/v1/mcp/tokens', { key: workspace.keys.live, body: { scopes } });
  if (created.status !== 201) throw new Error(`token: ${created.status} ${created.text}`);
  return created.body as { id: string; token: string };
}

test.before(async () => {
  api = await startApi();
  ws = await api.workspace('MCP');
  other = await api.workspace('MCP elsewhere');
  ({ token: fullToken, id: fullTokenId } = await issue(ws, EVERY_SCOPE));
});
test.after.always(() => api.close());

const control = (key: string, workspaceId: string, body: unknown, headers: Record<string, string> = {}) =>
  api.call('POST', `/v1/mcp/hosted/${workspaceId}`, {
    key,
    headers: { 'content-type': 'application/json', ...headers },
    rawBody: typeof body === 'string' ? body : JSON.stringify(body),
  });

function isDescriptor(t: ExecutionContext, body: any, workspace: TestWorkspace, environment = 'live') {
  t.is(body.object, 'mcp_endpoint');
  t.is(body.workspace_id, workspace.workspace_id);
  t.is(body.environment, environment);
  t.deepEqual(body.service, { name: 'valise', version: '1.0.0' });
  t.is(body.protocol_version, '2024-11-05');
  t.is(body.endpoint_url, `${api.url}/v1/mcp/hosted/${workspace.workspace_id}`);
  t.deepEqual(body.transport, {
    type: 'streamable-http',
    url: `${api.url}/v1/mcp/hosted/${workspace.workspace_id}/transport`,
    authentication: 'Authorization: Bearer svc_mcp_…',
  });
  t.deepEqual(
    body.tools.map((tool: { name: string; required_scope: string }) => [tool.name, tool.required_scope]),
    MCP_TOOLS.map((tool) => [tool.name, tool.requiredScope]),
  );
}

test('control: initialize, tools/list and ping answer in JSON-RPC, echoing the id', async (t) => {
  for (const key of [ws.keys.live, fullToken]) {
    const init = await control(key, ws.workspace_id, { jsonrpc: '2.0', id: 7, method: 'initialize', params: {} });
    t.is(init.status, 200, init.text);
    t.is(init.headers.get('x-service-mcp-hosted'), 'control-v1');
    t.is(init.body.jsonrpc, '2.0');
    t.is(init.body.id, 7);
    t.is(init.body.result.protocolVersion, '2024-11-05');
    t.deepEqual(init.body.result.serverInfo, { name: 'valise', version: '1.0.0' });
    t.deepEqual(Object.keys(init.body.result.capabilities).sort(), ['prompts', 'resources', 'tools']);
    isDescriptor(t, init.body.result.service, ws);

    const tools = await control(key, ws.workspace_id, { jsonrpc: '2.0', id: 'list-1', method: 'tools/list' });
    t.is(tools.status, 200);
    t.is(tools.headers.get('x-service-mcp-hosted'), 'control-v1');
    t.is(tools.body.id, 'list-1');
    t.deepEqual(
      tools.body.result.tools,
      MCP_TOOLS.map((tool) => ({
        name: tool.name,
        description: tool.description,
        inputSchema: { type: 'object', properties: {} },
      })),
    );

    const ping = await control(key, ws.workspace_id, { jsonrpc: '2.0', id: null, method: 'ping' });
    t.deepEqual(ping.body, { jsonrpc: '2.0', id: null, result: {} });
    t.is(ping.headers.get('x-service-mcp-hosted'), 'control-v1');
  }
  // No id: null. An id of another type: null too.
  t.deepEqual((await control(fullToken, ws.workspace_id, { jsonrpc: '2.0', method: 'ping' })).body, {
    jsonrpc: '2.0',
    id: null,
    result: {},
  });
  t.is((await control(fullToken, ws.workspace_id, { jsonrpc: '2.0', id: { x: 1 }, method: 'ping' })).body.id, null);
});

test('control: another method, no method, or a body that is not JSON gets the bare descriptor', async (t) => {
  const cases: Array<[string, unknown, Record<string, string>?]> = [
    ['another method', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_transfers' } }],
    ['no method', { jsonrpc: '2.0', id: 2 }],
    ['invalid JSON', '{"jsonrpc": "2.0", "id": 3, "method": "initialize"'],
    ['not JSON at all', 'hello'],
    ['a JSON array', [{ jsonrpc: '2.0', id: 4, method: 'ping' }]],
    ['an empty body', ''],
  ];
  for (const [label, body, headers] of cases) {
    const answer = await control(fullToken, ws.workspace_id, body, headers);
    t.is(answer.status, 200, `${label}: ${answer.text}`);
    t.is(answer.headers.get('x-service-mcp-hosted'), 'control-v1', label);
    t.is(answer.body.jsonrpc, undefined, label);
    isDescriptor(t, answer.body, ws);
  }
});

test("control: GET answers the descriptor; another workspace's path is 403 forbidden", async (t) => {
  for (const key of [ws.keys.live, fullToken]) {
    const described = await api.call('GET', `/v1/mcp/hosted/${ws.workspace_id}`, { key });
    t.is(described.status, 200);
    t.is(described.headers.get('x-service-mcp-hosted'), 'control-v1');
    isDescriptor(t, described.body, ws);
  }
  isDescriptor(t, (await api.call('GET', `/v1/mcp/hosted/${ws.workspace_id}`, { key: ws.keys.test })).body, ws, 'test');

  for (const [key, workspaceId] of [
    [ws.keys.live, other.workspace_id],
    [fullToken, other.workspace_id],
    [other.keys.live, ws.workspace_id],
    [fullToken, 'not-a-workspace'],
  ] as const) {
    for (const answer of [
      await api.call('GET', `/v1/mcp/hosted/${workspaceId}`, { key }),
      await control(key, workspaceId, { jsonrpc: '2.0', id: 1, method: 'initialize' }),
    ]) {
      t.is(answer.status, 403, answer.text);
      t.is(answer.body.error.code, 'forbidden');
      t.is(answer.headers.get('x-service-mcp-hosted'), null);
    }
  }
  const anonymous = await api.call('GET', `/v1/mcp/hosted/${ws.workspace_id}`);
  t.is(anonymous.status, 401);
  t.is(anonymous.body.error.code, 'missing_api_key');
});

/** The official MCP SDK's client, connected to a workspace's transport with a token. */
async function connect(token: string, workspaceId = ws.workspace_id) {
  const client = new Client({ name: 'valise-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${api.url}/v1/mcp/hosted/${workspaceId}/transport`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/** A tool's answer: its JSON, or its error's. */
function resultOf(result: unknown): { isError: boolean; body: any } {
  const call = result as CallToolResult;
  const [first] = call.content;
  if (first?.type !== 'text') throw new Error(`no text content: ${JSON.stringify(call)}`);
  return { isError: call.isError === true, body: JSON.parse(first.text) };
}

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  return resultOf(await client.callTool({ name, arguments: args }));
}

test('transport: the official client connects, lists the tools and runs each, as the API answers', async (t) => {
  const client = await connect(fullToken);
  try {
    t.deepEqual(client.getServerVersion(), { name: 'valise', version: '1.0.0' });
    const { tools } = await client.listTools();
    t.deepEqual(
      tools.map((tool) => [tool.name, tool._meta?.required_scope]),
      MCP_TOOLS.map((tool) => [tool.name, tool.requiredScope]),
    );
    const create = tools.find((tool) => tool.name === 'create_transfer');
    t.is(create?.inputSchema.type, 'object');
    t.truthy(create?.inputSchema.properties?.files);
    t.deepEqual(create?.inputSchema.required, ['files']);

    // create_transfer: the transfer and its upload URLs, as GET /v1/transfers/{id} then shows it.
    const created = await call(client, 'create_transfer', {
      files: [{ name: 'report.pdf', size: 1234, mime_type: 'application/pdf' }],
      transfer_title: 'From an agent',
    });
    t.false(created.isError, JSON.stringify(created.body));
    t.is(created.body.upload_urls.length, 1);
    t.regex(created.body.upload_urls[0].url, /\/v1\/uploads\//);
    const transferId = created.body.transfer.id as string;
    const viaApi = await api.call('GET', `/v1/transfers/${transferId}`, { key: ws.keys.live });
    t.is(viaApi.status, 200);
    t.is(viaApi.body.transfer_title, 'From an agent');
    t.is(created.body.share_url, viaApi.body.share_url);

    // list_transfers: the API's list, search included.
    const listed = await call(client, 'list_transfers', { search: 'From an agent' });
    const apiList = await api.call('GET', `/v1/transfers?search=${encodeURIComponent('From an agent')}`, {
      key: ws.keys.live,
    });
    t.deepEqual(
      listed.body.data.map((row: { id: string }) => row.id),
      apiList.body.data.map((row: { id: string }) => row.id),
    );
    t.true(listed.body.data.some((row: { id: string }) => row.id === transferId));

    // get_transfer_status: waiting for its file, not downloadable yet.
    const status = await call(client, 'get_transfer_status', { transfer_id: transferId });
    t.like(status.body, {
      object: 'transfer_status',
      transfer_id: transferId,
      status: viaApi.body.status,
      phase: 'uploading',
      downloads: { total: 0, max: viaApi.body.max_downloads, downloadable: false, blocked_reason: 'uploading' },
    });
    t.like(status.body.files[0], { name: 'report.pdf', size: 1234, upload_state: 'pending', bytes_received: 0 });

    // revoke_transfer: deleted, as the API then reads it.
    const revoked = await call(client, 'revoke_transfer', { transfer_id: transferId });
    t.false(revoked.isError);
    t.is(revoked.body.status, 'deleted');
    t.is((await api.call('GET', `/v1/transfers/${transferId}`, { key: ws.keys.live })).body.status, 'deleted');
    const after = await call(client, 'get_transfer_status', { transfer_id: transferId });
    t.like(after.body.downloads, { downloadable: false, blocked_reason: 'revoked' });

    // list_intakes and list_intake_documents.
    const intake = await api.call('POST', '/v1/intakes', { key: ws.keys.live, body: { title: 'Agent intake' } });
    t.is(intake.status, 201, intake.text);
    const intakes = await call(client, 'list_intakes', {});
    const apiIntakes = await api.call('GET', '/v1/intakes', { key: ws.keys.live });
    t.deepEqual(
      intakes.body.data.map((row: { id: string }) => row.id),
      apiIntakes.body.data.map((row: { id: string }) => row.id),
    );
    t.true(intakes.body.data.some((row: { id: string }) => row.id === intake.body.id));
    const submitted = await api.call('POST', `/v1/intakes/${intake.body.id}/submissions`, {
      key: intake.body.publishable_key.key,
      body: { files: [{ name: 'invoice.pdf', size: 10 }] },
    });
    t.is(submitted.status, 201, submitted.text);
    const documents = await call(client, 'list_intake_documents', { intake_id: intake.body.id });
    t.false(documents.isError, JSON.stringify(documents.body));
    t.deepEqual(
      documents.body.data.map((row: { id: string }) => row.id),
      [submitted.body.document.id],
    );

    // list_vaults and list_vault_items.
    const vault = await api.call('POST', '/v1/coffres', { key: ws.keys.live, body: { name: 'Agent room' } });
    const item = await api.call('POST', `/v1/coffres/${vault.body.id}/items`, {
      key: ws.keys.live,
      body: { name: 'plan.pdf', size: 1 },
    });
    t.is(item.status, 201, item.text);
    const vaults = await call(client, 'list_vaults', { limit: 5 });
    t.is(vaults.body.limit, 5);
    t.true(vaults.body.data.some((row: { id: string }) => row.id === vault.body.id));
    const items = await call(client, 'list_vault_items', { vault_id: vault.body.id });
    const apiItems = await api.call('GET', `/v1/coffres/${vault.body.id}/items`, { key: ws.keys.live });
    t.deepEqual(
      items.body.data.map((row: { id: string }) => row.id),
      apiItems.body.data.map((row: { id: string }) => row.id),
    );
    t.is(items.body.data[0].id, item.body.item.id);

    // search_audit_log: the tool calls above are in it, as the API lists them.
    const audit = await call(client, 'search_audit_log', { action: 'mcp.tool_call', limit: 100 });
    const apiAudit = await api.call('GET', '/v1/audit?action=mcp.tool_call&limit=100', { key: ws.keys.live });
    // The API's list, read after, also has the entries written since (this search's own, other tests'):
    // from the tool's newest entry on, the two agree.
    const toolIds = audit.body.data.map((row: { id: string }) => row.id) as string[];
    const apiIds = apiAudit.body.data.map((row: { id: string }) => row.id) as string[];
    const start = apiIds.indexOf(toolIds[0] ?? '');
    t.true(start >= 0);
    t.deepEqual(apiIds.slice(start), toolIds.slice(0, apiIds.length - start));
    const createEntry = audit.body.data.find(
      (row: { resource_id: string; metadata: { tool: string } }) =>
        row.metadata.tool === 'create_transfer' && row.resource_id === transferId,
    );
    t.like(createEntry, {
      status: 'success',
      resource_type: 'mcp_tool',
      resource_id: transferId,
      actor_id: ws.user_id,
      metadata: { mcp_token_id: fullTokenId, required_scope: 'transfers:write', status_code: 200 },
    });

    // analytics_summary: the API's numbers.
    const summary = await call(client, 'analytics_summary', {});
    const apiSummary = await api.call('GET', '/v1/analytics', { key: ws.keys.live });
    t.is(summary.body.object, 'analytics_summary');
    t.is(summary.body.transfers_created, apiSummary.body.transfers_created);
    t.true(summary.body.transfers_created >= 1);
  } finally {
    await client.close();
  }
});

test('transport: a tool without its scope is refused, naming the scope, and audited as refused', async (t) => {
  const reader = await issue(ws, ['transfers:read']);
  const client = await connect(reader.token);
  try {
    const refused = await call(client, 'create_transfer', { files: [{ name: 'a.txt', size: 1 }] });
    t.true(refused.isError);
    t.like(refused.body.error, { code: 'scope_missing', required_scope: 'transfers:write' });
    t.regex(refused.body.error.message, /transfers:write/);
    // The envelope the route itself would answer, with its documentation and request id.
    t.true(String(refused.body.error.doc_url).endsWith('/errors#scope_missing'), refused.body.error.doc_url);
    t.regex(refused.body.error.request_id, /\S/);
    t.is(refused.body.error.param, null);
    const audit = await call(client, 'list_transfers', {});
    t.false(audit.isError, 'a tool it holds the scope of still runs');
    const noAudit = await call(client, 'search_audit_log', {});
    t.like(noAudit.body.error, { code: 'scope_missing', required_scope: 'audit:read' });
  } finally {
    await client.close();
  }
  const entries = await api.call('GET', '/v1/audit?action=mcp.tool_call&limit=100', { key: ws.keys.live });
  const entry = entries.body.data.find(
    (row: { metadata: { mcp_token_id: string; tool: string } }) =>
      row.metadata.mcp_token_id === reader.id && row.metadata.tool === 'create_transfer',
  );
  t.like(entry, {
    status: 'failure',
    metadata: { status_code: 403, error_code: 'scope_missing', required_scope: 'transfers:write' },
  });
  // No transfer was made.
  t.false(entries.text.includes(reader.token));
});

test("transport: bad arguments are the API's 400, and another workspace's ids are not found", async (t) => {
  const theirs = await createTransfer(api, other.keys.live, { files: [{ name: 'theirs.bin', size: 3 }] });
  const theirIntake = await api.call('POST', '/v1/intakes', { key: other.keys.live, body: { title: 'Theirs' } });
  const theirVault = await api.call('POST', '/v1/coffres', { key: other.keys.live, body: { name: 'Theirs' } });
  const client = await connect(fullToken);
  try {
    for (const [name, args] of [
      ['get_transfer_status', { transfer_id: theirs.transfer.id }],
      ['revoke_transfer', { transfer_id: theirs.transfer.id }],
      ['list_intake_documents', { intake_id: theirIntake.body.id }],
      ['list_vault_items', { vault_id: theirVault.body.id }],
    ] as const) {
      const answer = await call(client, name, args);
      t.true(answer.isError, name);
      t.is(answer.body.error.code, 'not_found', name);
    }
    const listed = await call(client, 'list_transfers', { limit: 100 });
    t.false(JSON.stringify(listed.body).includes(theirs.transfer.id));

    const badId = await call(client, 'get_transfer_status', { transfer_id: 'nope' });
    t.like(badId.body.error, { code: 'validation_error', param: 'id' });
    const badName = await call(client, 'create_transfer', { files: [{ name: '../etc/passwd', size: 1 }] });
    t.like(badName.body.error, { code: 'validation_error', param: 'files.0.name' });
    const weakPassword = await call(client, 'create_transfer', {
      files: [{ name: 'a', size: 1 }],
      password: '12345678',
    });
    t.like(weakPassword.body.error, { code: 'validation_error', param: 'password' });
    const wrongType = (await client.callTool({
      name: 'list_transfers',
      arguments: { limit: 'many' },
    })) as CallToolResult;
    t.true(wrongType.isError, 'the SDK refuses arguments outside the input schema');
  } finally {
    await client.close();
  }
  // Still theirs, untouched.
  t.is(
    (await api.call('GET', `/v1/transfers/${theirs.transfer.id}`, { key: other.keys.live })).body.status,
    'scanning',
  );
});

test("transport: another workspace's path, a revoked token and an API key are refused", async (t) => {
  await t.throwsAsync(connect(fullToken, other.workspace_id), { message: /403|forbidden/i });
  const { token, id } = await issue(ws, ['transfers:read']);
  const client = await connect(token);
  t.false((await call(client, 'list_transfers', {})).isError);
  await api.call('DELETE', `/v1/mcp/tokens/${id}`, { key: ws.keys.live });
  await t.throwsAsync(client.callTool({ name: 'list_transfers', arguments: {} }), { message: /401|revoked/i });
  await client.close().catch(() => undefined);
  await t.throwsAsync(connect(ws.keys.live), { message: /401|invalid/i });

  // No server-initiated stream: GET answers 405.
  const stream = await api.call('GET', `/v1/mcp/hosted/${ws.workspace_id}/transport`, {
    key: fullToken,
    headers: { accept: 'text/event-stream' },
  });
  t.is(stream.status, 405);
  t.is(stream.headers.get('allow'), 'POST');
  // A body that is no JSON-RPC message: the API's 400 envelope.
  const garbage = await api.call('POST', `/v1/mcp/hosted/${ws.workspace_id}/transport`, {
    key: fullToken,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    rawBody: '{not json',
  });
  t.is(garbage.status, 400);
  t.is(garbage.body.error.code, 'validation_error');
});

test("transport: a tool draws from its route's rate budget; the transport's messages from the read budget", async (t) => {
  const limited = await startApi({ RATE_LIMIT_WRITE: '2' });
  await intoFreshRateWindow();
  try {
    const own = await limited.workspace('MCP rate');
    const created = await limited.call('POST', '/v1/mcp/tokens', {
      key: own.keys.live,
      body: { scopes: ['transfers:read', 'transfers:write'] },
    });
    t.is(created.status, 201, created.text);
    const client = new Client({ name: 'valise-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${limited.url}/v1/mcp/hosted/${own.workspace_id}/transport`), {
        requestInit: { headers: { Authorization: `Bearer ${created.body.token}` } },
      }),
    );
    try {
      // The token's POST spent one write; one is left, for one transfer.
      const file = { files: [{ name: 'a.bin', size: 1 }] };
      t.false(resultOf(await client.callTool({ name: 'create_transfer', arguments: file })).isError);
      const refused = resultOf(await client.callTool({ name: 'create_transfer', arguments: file }));
      t.true(refused.isError);
      t.is(refused.body.error.code, 'rate_limited');
      t.true(refused.body.error.retry_after_seconds > 0);
      // Reads still run: the transport's messages are not writes.
      for (let i = 0; i < 3; i++) {
        t.false(resultOf(await client.callTool({ name: 'list_transfers', arguments: {} })).isError);
      }
    } finally {
      await client.close();
    }
  } finally {
    await limited.close();
  }
});
