import { rm } from 'node:fs/promises';
import test from 'ava';
import { startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';
import { cli } from './cli-harness.ts';

// `valise scim tokens create|ls|revoke` and `valise scim audit` against the real API.

let api: TestApi;
let ws: TestWorkspace;
let home: string | undefined;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('CLI SCIM');
});
test.after.always(async () => {
  await api.close();
  if (home) await rm(home, { recursive: true, force: true });
});

test('scim tokens create prints the token once; ls, revoke and audit follow', async (t) => {
  const valise = await cli(api.url, ws.keys.live);
  home = valise.home;
  const noCode = await valise.run(['scim', 'tokens', 'create', '--name', 'Okta']);
  t.is(noCode.code, 2);
  t.regex(noCode.stderr, /mfa_required/);

  const human = await valise.run(['scim', 'tokens', 'create', '--name', 'Okta', '--mfa-code', await ws.nextMfa()]);
  t.is(human.code, 0, human.stderr);
  const token = human.stdout.trim();
  t.regex(token, /^scim_[0-9A-Za-z]{48}$/);
  const users = await api.call('GET', '/v1/scim/Users', { key: token });
  t.is(users.status, 200);

  const list = await valise.json(['scim', 'tokens', 'ls']);
  t.is(list.data.length, 1);
  t.is(list.data[0].name, 'Okta');
  const audit = await valise.json(['scim', 'audit', '--operation', 'list_users']);
  t.deepEqual(audit.filter, { limit: 100, operation: 'list_users' });
  t.is(audit.data[0].response_status, 200);
  const wrong = await valise.run(['scim', 'audit', '--operation', 'patch_user']);
  t.is(wrong.code, 1);

  const revoked = await valise.json(['scim', 'tokens', 'revoke', list.data[0].id]);
  t.true(revoked.revoked);
  t.is((await api.call('GET', '/v1/scim/Users', { key: token })).status, 401);
  const table = await valise.run(['scim', 'tokens', 'ls']);
  t.regex(table.stdout, /^ID\s+NAME\s+PREFIX/);
});
