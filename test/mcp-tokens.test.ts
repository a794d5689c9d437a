import test from 'ava';
import { z } from 'zod';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { sql } from '../lib/db/sql.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

// MCP tokens through the real API (docs/mcp.md, "Tokens"): issued once with scopes the issuing key
// holds, a code for sensitive ones, listed without their values, revoked, expired, confined to their
// workspace and environment, and opening the MCP routes only.

let api: TestApi;
let ws: TestWorkspace;
let other: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('MCP tokens');
  other = await api.workspace('MCP tokens elsewhere');
});
test.after.always(() => api.close());

const issue = (key: string, body: Record<string, unknown>) => api.call('POST', '/v1/mcp/tokens', { key, body });
const describe = (token: string, workspaceId: string) =>
  api.call('GET', `/v1/mcp/hosted/${workspaceId}`, { key: token });

test('a token is shown once, listed with its scopes and without its value, and revoked at once', async (t) => {
  const created = await issue(ws.keys.live, { name: 'Claude', scopes: ['transfers:read', 'audit:read'] });
  t.is(created.status, 201, created.text);
  const token = created.body.token as string;
  t.regex(token, /^svc_mcp_[0-9A-Za-z]{40}$/);
  t.is(created.body.token_prefix, token.slice(0, 14));
  t.like(created.body, {
    object: 'mcp_token',
    name: 'Claude',
    scopes: ['transfers:read', 'audit:read'],
    environment: 'live',
    is_active: true,
    expires_at: null,
    revoked_at: null,
  });
  t.regex(created.body.warning, /only time/);

  t.is((await describe(token, ws.workspace_id)).status, 200);
  const list = await api.call('GET', '/v1/mcp/tokens', { key: ws.keys.live });
  t.is(list.status, 200);
  t.is(list.body.object, 'list');
  const listed = list.body.data.find((row: { id: string }) => row.id === created.body.id);
  t.like(listed, { scopes: ['transfers:read', 'audit:read'], is_active: true });
  t.not(listed.last_used_at, null, 'the use above is recorded');
  t.false(list.text.includes(token));

  const revoked = await api.call('DELETE', `/v1/mcp/tokens/${created.body.id}`, { key: ws.keys.live });
  t.is(revoked.status, 200);
  t.like(revoked.body, { id: created.body.id, revoked: true, is_active: false });
  const refused = await describe(token, ws.workspace_id);
  t.is(refused.status, 401);
  t.is(refused.body.error.code, 'revoked_api_key');
  // A known token refused is in the audit log, as a known key's failures are.
  const failures = await api.call('GET', '/v1/audit?action=auth.failed&resource_type=mcp_token', { key: ws.keys.live });
  t.like(
    failures.body.data.find((entry: { resource_id: string }) => entry.resource_id === created.body.id),
    { status: 'failure', actor_id: ws.user_id, metadata: { reason: 'revoked', count: 1 } },
  );
  const again = await api.call('DELETE', `/v1/mcp/tokens/${created.body.id}`, { key: ws.keys.live });
  t.is(again.status, 200);
  t.is(again.body.revoked_at, revoked.body.revoked_at, 'revoking again changes nothing');

  // Events for webhooks: one each, naming the token by its prefix, never its value.
  const tenant = { workspaceId: ws.workspace_id, environment: 'live' as const };
  const fired = async (type: string) =>
    (await createEventQueries(api.services.db).listByType(tenant, type)).filter(
      (event) => (event.data.mcp_token as { id: string }).id === created.body.id,
    );
  const [issued] = await fired('mcp_token.created');
  t.like(issued?.data, {
    mcp_token: { name: 'Claude', token_prefix: created.body.token_prefix, scopes: ['transfers:read', 'audit:read'] },
  });
  t.is((await fired('mcp_token.revoked')).length, 1, 'a second revocation fires nothing');
  t.false(JSON.stringify(issued?.data).includes(token));

  // Audited, the value nowhere in the entries.
  const audit = await api.call('GET', '/v1/audit?action=mcp_token.create', { key: ws.keys.live });
  t.true(audit.body.data.some((entry: { resource_id: string }) => entry.resource_id === created.body.id));
  const revocations = await api.call('GET', '/v1/audit?action=mcp_token.revoke', { key: ws.keys.live });
  t.true(revocations.body.data.some((entry: { resource_id: string }) => entry.resource_id === created.body.id));
  t.false(audit.text.includes(token));
});

test('an expired token is refused with expired_api_key; an unknown one with invalid_api_key', async (t) => {
  const created = await issue(ws.keys.live, { scopes: ['transfers:read'], expires_in_days: 1 });
  t.is(created.status, 201, created.text);
  t.truthy(created.body.expires_at);
  t.is((await describe(created.body.token, ws.workspace_id)).status, 200);
  await api.services.db.query(
    sql.typeAlias('void')`UPDATE mcp_tokens SET expires_at = now() - interval '1 second' WHERE id = ${created.body.id}`,
  );
  const expired = await describe(created.body.token, ws.workspace_id);
  t.is(expired.status, 401);
  t.is(expired.body.error.code, 'expired_api_key');
  const listed = await api.call('GET', '/v1/mcp/tokens', { key: ws.keys.live });
  t.false(listed.body.data.find((row: { id: string }) => row.id === created.body.id).is_active);

  const unknown = await describe(`svc_mcp_${'A'.repeat(40)}`, ws.workspace_id);
  t.is(unknown.status, 401);
  t.is(unknown.body.error.code, 'invalid_api_key');
  const malformed = await describe('svc_mcp_short', ws.workspace_id);
  t.is(malformed.body.error.code, 'invalid_api_key');
});

test('a sensitive scope needs mfa_code, as for an API key', async (t) => {
  const own = await api.workspace('MCP tokens MFA');
  const without = await issue(own.keys.live, { scopes: ['transfers:read', 'audit:export'] });
  t.is(without.status, 401);
  t.is(without.body.error.code, 'mfa_required');
  t.deepEqual(without.body.error.sensitive_scopes, ['audit:export']);
  t.is(without.body.error.param, 'mfa_code');
  const wrong = await issue(own.keys.live, { scopes: ['audit:export'], mfa_code: '000000' });
  t.is(wrong.body.error.code, 'mfa_required');
  const right = await issue(own.keys.live, { scopes: ['audit:export'], mfa_code: await own.nextMfa() });
  t.is(right.status, 201, right.text);
  t.deepEqual(right.body.scopes, ['audit:export']);
  // No code needed when nothing granted is sensitive.
  t.is((await issue(own.keys.live, { scopes: ['transfers:read'] })).status, 201);
});

test('scopes: validated against the catalog, never beyond the issuing key, and mcp:manage to manage tokens', async (t) => {
  const unknown = await issue(ws.keys.live, { scopes: ['transfers:fly'] });
  t.is(unknown.status, 400);
  t.is(unknown.body.error.code, 'validation_error');
  t.is(unknown.body.error.param, 'scopes.0');
  t.is((await issue(ws.keys.live, { scopes: [] })).body.error.param, 'scopes');
  t.is((await issue(ws.keys.live, {})).body.error.param, 'scopes');

  const reader = await ws.mintKey({ name: 'reader', key_type: 'restricted', scopes: ['transfers:read'] });
  const noManage = await issue(reader.key, { scopes: ['transfers:read'] });
  t.is(noManage.status, 403);
  t.is(noManage.body.error.code, 'scope_missing');
  t.is(noManage.body.error.required_scope, 'mcp:manage');
  t.is((await api.call('GET', '/v1/mcp/tokens', { key: reader.key })).status, 403);

  const manager = await ws.mintKey({
    name: 'manager',
    key_type: 'restricted',
    scopes: ['mcp:manage', 'transfers:read'],
  });
  t.is((await issue(manager.key, { scopes: ['transfers:read'] })).status, 201);
  const beyond = await issue(manager.key, { scopes: ['transfers:read', 'transfers:write'] });
  t.is(beyond.status, 403);
  t.is(beyond.body.error.code, 'scope_missing');
  t.regex(beyond.body.error.message, /transfers:write/);
});

test("a token belongs to its key's workspace and environment", async (t) => {
  const created = await issue(ws.keys.live, { scopes: ['transfers:read'] });
  const id = created.body.id as string;
  for (const key of [other.keys.live, ws.keys.test, ws.keys.sandbox]) {
    const revoke = await api.call('DELETE', `/v1/mcp/tokens/${id}`, { key });
    t.is(revoke.status, 404);
    t.is(revoke.body.error.code, 'not_found');
    const list = await api.call('GET', '/v1/mcp/tokens?limit=100', { key });
    t.false(list.text.includes(id));
  }
  const fromTest = await issue(ws.keys.test, { scopes: ['transfers:read'] });
  t.is(fromTest.body.environment, 'test');
  const described = await describe(fromTest.body.token, ws.workspace_id);
  t.is(described.body.environment, 'test');
  // Another workspace's endpoint is refused to the token.
  const elsewhere = await describe(created.body.token, other.workspace_id);
  t.is(elsewhere.status, 403);
  t.is(elsewhere.body.error.code, 'forbidden');
  // Still A's, unrevoked.
  t.is((await describe(created.body.token, ws.workspace_id)).status, 200);
});

test('an MCP token opens the MCP routes only', async (t) => {
  const created = await issue(ws.keys.live, { scopes: ['transfers:read', 'mcp:manage', 'audit:read'] });
  const token = created.body.token as string;
  for (const [method, path] of [
    ['GET', '/v1/transfers'],
    ['GET', '/v1/me'],
    ['GET', '/v1/mcp/tokens'],
    ['POST', '/v1/mcp/tokens'],
    ['GET', '/v1/audit'],
  ] as const) {
    const response = await api.call(method, path, { key: token, ...(method === 'POST' ? { body: {} } : {}) });
    t.is(response.status, 401, `${method} ${path}`);
    t.is(response.body.error.code, 'invalid_api_key', `${method} ${path}`);
  }
  t.is((await describe(token, ws.workspace_id)).status, 200);
  // And the transport takes no API key.
  const byKey = await api.call('POST', `/v1/mcp/hosted/${ws.workspace_id}/transport`, {
    key: ws.keys.live,
    body: { jsonrpc: '2.0', id: 1, method: 'ping' },
  });
  t.is(byKey.status, 401);
  t.is(byKey.body.error.code, 'invalid_api_key');
});

test('the token value is stored only as a hash', async (t) => {
  const created = await issue(ws.keys.live, { scopes: ['transfers:read'] });
  const row = await api.services.db.one(
    sql.type(z.object({ token_hash: z.instanceof(Buffer), token_prefix: z.string() }))`
      SELECT token_hash, token_prefix FROM mcp_tokens WHERE id = ${created.body.id}`,
  );
  t.is(row.token_hash.length, 32);
  t.false(row.token_hash.toString('utf8').includes(created.body.token));
  t.is(row.token_prefix, created.body.token.slice(0, 14));
});
