import { rm } from 'node:fs/promises';
import test from 'ava';
import { startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';
import { cli } from './cli-harness.ts';

// `valise mcp tokens create|ls|revoke` against the real API.

let api: TestApi;
let ws: TestWorkspace;
let home: string | undefined;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('CLI MCP');
});
test.after.always(async () => {
  await api.close();
  if (home) await rm(home, { recursive: true, force: true });
});

test('mcp tokens create prints the token once; ls and revoke follow', async (t) => {
  const valise = await cli(api.url, ws.keys.live);
  home = valise.home;
  const noScope = await valise.run(['mcp', 'tokens', 'create', '--name', 'Claude']);
  t.is(noScope.code, 1);
  t.regex(noScope.stderr, /--scope/);
  const sensitive = await valise.run(['mcp', 'tokens', 'create', '--scope', 'audit:export']);
  t.is(sensitive.code, 2);
  t.regex(sensitive.stderr, /mfa_required/);

  const human = await valise.run([
    'mcp',
    'tokens',
    'create',
    '--name',
    'Claude',
    '--scope',
    'transfers:read',
    '--scope',
    'audit:read',
  ]);
  t.is(human.code, 0, human.stderr);
  const token = human.stdout.trim();
  t.regex(token, /^svc_mcp_[0-9A-Za-z]{40}$/);
  t.is((await api.call('GET', `/v1/mcp/hosted/${ws.workspace_id}`, { key: token })).status, 200);

  const list = await valise.json(['mcp', 'tokens', 'ls']);
  t.is(list.data.length, 1);
  t.like(list.data[0], { name: 'Claude', scopes: ['transfers:read', 'audit:read'], is_active: true });
  const table = await valise.run(['mcp', 'tokens', 'ls']);
  t.regex(table.stdout, /^ID\s+NAME\s+PREFIX\s+SCOPES/);
  t.regex(table.stdout, /transfers:read,audit:read/);

  const revoked = await valise.json(['mcp', 'tokens', 'revoke', list.data[0].id]);
  t.true(revoked.revoked);
  t.is((await api.call('GET', `/v1/mcp/hosted/${ws.workspace_id}`, { key: token })).status, 401);
  t.regex((await valise.run(['mcp', 'tokens', 'ls'])).stdout, /revoked/);
});
