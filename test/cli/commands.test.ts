import { randomBytes, randomUUID } from 'node:crypto';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { eventually, startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { waitForTransfer } from '../helpers/transfers.ts';
import { type Cli, cli, closedPort, firstLine } from './cli-harness.ts';

// Every other command of the real binary against the real API: login and the
// config file, transfers management, keys, webhooks, listen, audit, and the
// documented exit codes. Each --json output is parsed.

let api: TestApi;
let ws: TestWorkspace;
const homes: string[] = [];
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('CLI commands');
});
test.after.always(async () => {
  await api.close();
  await Promise.all(homes.map((home) => rm(home, { recursive: true, force: true })));
});

/** A CLI with its own config directory; `null`: no VALISE_API_KEY (log in first). */
async function session(apiKey: string | null = ws.keys.live, baseUrl = api.url): Promise<Cli> {
  const valise = await cli(baseUrl, apiKey ?? undefined);
  homes.push(valise.home);
  return valise;
}

test('login stores the key in a 0600 config file; VALISE_API_KEY overrides it', async (t) => {
  const valise = await session(null);
  const login = await valise.json(['login', '--api-key', ws.keys.live]);
  t.is(login.object, 'login');
  t.is(login.me.workspace.id, ws.workspace_id);
  const config = join(valise.home, 'valise', 'config.json');
  t.is((await stat(config)).mode & 0o777, 0o600);

  t.is((await valise.json(['whoami'])).environment, 'live');

  const other = await api.workspace('Another');
  const overridden = await valise.json(['whoami'], { env: { VALISE_API_KEY: other.keys.test } });
  t.is(overridden.workspace.id, other.workspace_id);
  t.is(overridden.environment, 'test');

  // A key piped on stdin, into another profile.
  const piped = await valise.run(['login', '--profile', 'ci'], { input: `${ws.keys.test}\n` });
  t.is(piped.code, 0, piped.stderr);
  t.is((await valise.json(['whoami', '--profile', 'ci'])).environment, 'test');

  const wrong = await valise.run(['login', '--api-key', `svc_live_${'x'.repeat(40)}`]);
  t.is(wrong.code, 2);
  t.regex(wrong.stderr, /invalid_api_key/);

  t.deepEqual(await valise.json(['logout']), { object: 'logout', profile: 'default', removed: true });
  const loggedOut = await valise.run(['ls']);
  t.is(loggedOut.code, 1);
  t.regex(loggedOut.stderr, /Not logged in.*\n.*valise login/);
});

test('ls, show, approve and rm with --json', async (t) => {
  const valise = await session();
  const file = join(valise.home, 'note.txt');
  await writeFile(file, 'approve me\n');
  const sent = await valise.json(['send', file, '--approval', '--title', 'Needs approval']);
  const rejected = await valise.json(['send', file, '--approval', '--title', 'To reject']);
  await waitForTransfer(api, ws.keys.live, sent.transfer.id, (tr) => tr.approval_status === 'pending');
  await waitForTransfer(api, ws.keys.live, rejected.transfer.id, (tr) => tr.approval_status === 'pending');

  const list = await valise.json(['ls', '--search', 'Needs approval']);
  t.is(list.object, 'list');
  t.deepEqual(
    list.data.map((tr: { id: string }) => tr.id),
    [sent.transfer.id],
  );
  const all = await valise.json(['ls', '--all', '--limit', '1']);
  t.false(all.has_more);
  const allIds = all.data.map((tr: { id: string }) => tr.id);
  t.true(allIds.includes(sent.transfer.id) && allIds.includes(rejected.transfer.id), 'every page was walked');

  const shown = await valise.json(['show', sent.transfer.id]);
  t.is(shown.files[0].name, 'note.txt');
  t.is(shown.approval_status, 'pending');

  const approved = await valise.json(['approve', sent.transfer.id, '--note', 'fine']);
  t.is(approved.approval_status, 'approved');
  t.is(approved.approval_note, 'fine');
  const refused = await valise.json(['approve', rejected.transfer.id, '--reject', '--note', 'no']);
  t.is(refused.approval_status, 'rejected');

  const human = await valise.run(['ls']);
  t.is(human.code, 0);
  t.regex(human.stdout, /^ID\s+CODE\s+TITLE\s+STATUS/);

  const revoked = await valise.json(['rm', sent.transfer.id]);
  t.is(revoked.status, 'deleted');
});

test('keys create needs MFA for a full key, then ls, rotate and revoke', async (t) => {
  const valise = await session();
  const noCode = await valise.run(['keys', 'create', '--name', 'full one']);
  t.is(noCode.code, 2);
  t.regex(noCode.stderr, /mfa_required/);
  t.regex(noCode.stderr, /--mfa-code/);
  const noCodeJson = await valise.run(['keys', 'create', '--name', 'full one', '--json']);
  t.is(noCodeJson.stdout, '');
  t.is(JSON.parse(noCodeJson.stderr).error.code, 'mfa_required');

  const full = await valise.json(['keys', 'create', '--name', 'full one', '--mfa-code', ws.mfa()]);
  t.regex(full.key, /^svc_live_/);
  t.is(full.key_type, 'full');

  const restricted = await valise.json([
    'keys',
    'create',
    '--name',
    'reader',
    '--restricted',
    '--scope',
    'transfers:read',
  ]);
  t.regex(restricted.key, /^svc_rk_live_/);
  t.deepEqual(restricted.scopes, ['transfers:read']);

  const list = await valise.json(['keys', 'ls', '--all']);
  const ids = list.data.map((k: { id: string }) => k.id);
  t.true(ids.includes(full.id) && ids.includes(restricted.id));

  const rotated = await valise.json(['keys', 'rotate', restricted.id, '--grace-hours', '0']);
  t.is(rotated.id, restricted.id);
  t.not(rotated.key, restricted.key);
  const rotatedFull = await valise.json(['keys', 'rotate', full.id, '--mfa-code', ws.mfa()]);
  t.truthy(rotatedFull.previous_key_valid_until);

  const revoked = await valise.json(['keys', 'revoke', restricted.id, '--reason', 'unused']);
  t.true(revoked.revoked);
  t.is(revoked.revocation_reason, 'unused');

  const human = await valise.run(['keys', 'ls']);
  t.regex(human.stdout, /^ID\s+NAME\s+PREFIX/);
});

test('webhooks create, ls, test, deliveries, rotate-secret and retry against a local receiver', async (t) => {
  const valise = await session();
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const created = await valise.json(['webhooks', 'create', '--url', receiver.url(), '--event', 'transfer.downloaded']);
  t.regex(created.secret, /^whsec_/);
  t.deepEqual(created.events, ['transfer.downloaded']);

  const list = await valise.json(['webhooks', 'ls']);
  t.true(list.data.some((w: { id: string }) => w.id === created.id));

  const ping = await valise.json(['webhooks', 'test', created.id]);
  t.true(ping.succeeded);
  t.is(ping.status_code, 200);
  t.is(receiver.received.length, 1);

  const deliveries = await valise.json(['webhooks', 'deliveries', created.id]);
  t.is(deliveries.object, 'list');
  t.is(deliveries.data[0].trigger, 'test');

  receiver.answer(() => ({ status: 500, body: 'nope' }));
  const failed = await valise.run(['webhooks', 'test', created.id]);
  t.is(failed.code, 2);
  t.regex(failed.stdout, /Failed/);

  const rotated = await valise.json(['webhooks', 'rotate-secret', created.id]);
  t.regex(rotated.secret, /^whsec_/);
  t.not(rotated.secret, created.secret);
  t.true(Date.parse(rotated.previous_secret_expires_at) > Date.now());

  // The receiver is fixed: the failed delivery is sent again, signed with both secrets.
  receiver.answer(() => ({ status: 204 }));
  const [failedDelivery] = (await valise.json(['webhooks', 'deliveries', created.id])).data;
  t.false(failedDelivery.succeeded);
  const retried = await valise.json(['webhooks', 'retry', created.id, failedDelivery.delivery_id]);
  t.true(retried.succeeded);
  t.is(retried.delivery_id, failedDelivery.delivery_id);
  const last = receiver.received.at(-1);
  if (!last) return t.fail('nothing received');
  const headers = last.headers as Record<string, string>;
  t.is(headers['webhook-id'], failedDelivery.event_id);
  for (const secret of [created.secret, rotated.secret]) {
    t.notThrows(() => new Webhook(secret).verify(last.body, headers), 'signed with both secrets');
  }
  const table = await valise.run(['webhooks', 'deliveries', created.id]);
  t.true(table.stdout.includes(failedDelivery.delivery_id), 'the table shows delivery ids to retry');
  t.is((await valise.run(['webhooks', 'retry', created.id])).code, 1);
});

test('listen verifies signatures and forwards only the good deliveries', async (t) => {
  const valise = await session();
  const app = await startReceiver();
  t.teardown(() => app.close());
  app.answer(() => ({ status: 202, body: 'accepted by app' }));
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const listener = valise.spawn([
    'listen',
    '--port',
    '0',
    '--forward-to',
    app.url('/app'),
    '--secret',
    secret,
    '--json',
  ]);
  t.teardown(() => listener.kill('SIGTERM'));
  const first = JSON.parse(await firstLine(listener));
  t.is(first.object, 'listener');
  const url = first.url as string;

  const body = JSON.stringify({ id: 'evt_1', type: 'ping', timestamp: new Date().toISOString(), data: {} });
  const headersFor = (key: string) => {
    const now = new Date();
    return {
      'content-type': 'application/json',
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(key).sign('evt_1', now, body),
      'x-custom': 'kept',
    };
  };

  const good = await fetch(url, { method: 'POST', headers: headersFor(secret), body });
  t.is(good.status, 202);
  t.is(await good.text(), 'accepted by app');
  t.is(app.received.length, 1);
  const forwarded = app.received[0];
  t.is(forwarded?.path, '/app');
  t.is(forwarded?.body, body);
  t.is(forwarded?.headers['webhook-id'], 'evt_1');
  t.is(forwarded?.headers['x-custom'], 'kept');
  t.truthy(forwarded?.headers['webhook-signature']);

  const otherSecret = `whsec_${randomBytes(32).toString('base64')}`;
  const bad = await fetch(url, { method: 'POST', headers: headersFor(otherSecret), body });
  t.is(bad.status, 400);
  t.is(((await bad.json()) as { error: { code: string } }).error.code, 'webhook_verification_failed');
  t.is(app.received.length, 1);

  // A mistyped secret stops it before it listens, without echoing the secret.
  const truncated = secret.slice(0, -5);
  const mistyped = await valise.run(['listen', '--port', '0', '--forward-to', app.url('/app'), '--secret', truncated]);
  t.is(mistyped.code, 1, mistyped.stderr);
  t.regex(mistyped.stderr, /--secret: Malformed webhook secret: expected whsec_<base64>/);
  t.false(mistyped.stderr.includes(truncated.slice('whsec_'.length)));
});

test('audit --json lists the workspace audit log', async (t) => {
  const valise = await session();
  const created = await valise.json([
    'keys',
    'create',
    '--name',
    'audited',
    '--restricted',
    '--scope',
    'transfers:read',
  ]);
  const audit = await eventually(async () => {
    const page = await valise.json(['audit', '--limit', '50']);
    return page.data.length > 0 ? page : undefined;
  });
  t.is(audit.object, 'list');
  t.is(audit.data[0].object, 'audit_entry');
  // The audit action of POST /v1/api-keys is `api_key.create` (`api_key.created` is the event type).
  type Entry = { action: string; resource_type: string | null; resource_id: string | null };
  const filtered = await eventually(async () => {
    const page = await valise.json(['audit', '--action', 'api_key.create']);
    return page.data.some((entry: Entry) => entry.resource_id === created.id) ? page : undefined;
  }).catch(() => undefined);
  const entries: Entry[] = filtered?.data ?? [];
  t.true(entries.length > 0, 'the filter matches the key just created');
  t.deepEqual([...new Set(entries.map((entry) => entry.action))], ['api_key.create']);
  t.deepEqual(
    entries.filter((entry) => entry.resource_id === created.id).map((entry) => entry.resource_type),
    ['api_key'],
    'one entry names the key just created',
  );
});

test('audit export streams the log to stdout or a file; audit verify reports the chain', async (t) => {
  const valise = await session();
  await valise.json(['keys', 'create', '--name', 'exported', '--restricted', '--scope', 'transfers:read']);
  const out = await valise.run(['audit', 'export', '--action', 'api_key.create']);
  t.is(out.code, 0, out.stderr);
  const lines = out.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  t.true(lines.length >= 1);
  t.true(lines.every((entry) => entry.action === 'api_key.create' && typeof entry.entry_hash === 'string'));

  const file = join(valise.home, 'audit.csv');
  const saved = await valise.run(['audit', 'export', '--format', 'csv', '--output', file]);
  t.is(saved.code, 0, saved.stderr);
  t.true((await readFile(file, 'utf8')).startsWith('id,seq,created_at,'));
  const again = await valise.run(['audit', 'export', '--format', 'csv', '--output', file]);
  t.is(again.code, 4, 'an existing file is left alone without --force');
  t.is((await valise.run(['audit', 'export', '--format', 'csv', '--output', file, '--force'])).code, 0);

  const verified = await valise.json(['audit', 'verify']);
  t.is(verified.object, 'audit_verification');
  t.true(verified.valid);
  const text = await valise.run(['audit', 'verify']);
  t.is(text.code, 0, text.stderr);
  t.regex(text.stdout, /^Valid: \d+ entries/);
});

test('exit codes: 1 usage, 2 API error with its code, 3 network', async (t) => {
  const valise = await session();
  const usage = await valise.run(['ls', '--status', 'nope']);
  t.is(usage.code, 1);
  t.regex(usage.stderr, /--status must be one of/);
  t.is((await valise.run(['frobnicate'])).code, 1);
  t.is((await valise.run(['send'])).code, 1);
  t.is((await valise.run(['show'])).code, 1);

  const missing = await valise.run(['show', randomUUID()]);
  t.is(missing.code, 2);
  t.regex(missing.stderr, /\(not_found\)/);
  t.notRegex(missing.stderr, /at .*\.ts:\d+/); // no stack trace
  const missingJson = await valise.run(['show', randomUUID(), '--json']);
  t.is(missingJson.code, 2);
  t.is(missingJson.stdout, '');
  t.is(JSON.parse(missingJson.stderr).error.code, 'not_found');

  const offline = await session(ws.keys.live, `http://127.0.0.1:${await closedPort()}`);
  const network = await offline.run(['ls']);
  t.is(network.code, 3);
  t.regex(network.stderr, /could not reach/);
});

test('recipients add, ls, update, of and rm; send --to twice gives each address its own link', async (t) => {
  const valise = await session();
  const [ann, bob] = [`ann-${randomUUID()}@valise.test`, `bob-${randomUUID()}@valise.test`];
  const added = await valise.json(['recipients', 'add', ann, '--name', 'Ann', '--org', 'Acme', '--tag', 'VIP']);
  t.like(added, { object: 'recipient', email: ann, name: 'Ann', organisation: 'Acme', tags: ['vip'] });
  const found = await valise.json(['recipients', 'ls', '--tag', 'vip', '--search', ann]);
  t.deepEqual(
    found.data.map((r: { id: string }) => r.id),
    [added.id],
  );
  const updated = await valise.json(['recipients', 'update', added.id, '--org', 'Globex']);
  t.is(updated.organisation, 'Globex');
  t.is((await valise.run(['recipients', 'update', added.id])).code, 1, 'nothing to change is a usage error');

  const file = join(valise.home, 'for-two.txt');
  await writeFile(file, 'for two\n');
  const sent = await valise.json(['send', file, '--to', ann, '--to', bob]);
  const to = await valise.json(['recipients', 'of', sent.transfer.id]);
  t.deepEqual(
    to.data.map((r: { email: string }) => r.email),
    [ann, bob],
  );
  t.is(new Set(to.data.map((r: { share_url: string }) => r.share_url)).size, 2);
  t.is(to.data[0].recipient_id, added.id, 'the existing entry is used, its name kept');
  t.is((await valise.json(['recipients', 'show', added.id])).name, 'Ann');

  t.deepEqual(await valise.json(['recipients', 'rm', added.id]), { id: added.id, object: 'recipient', deleted: true });
  const gone = await valise.run(['recipients', 'show', added.id]);
  t.is(gone.code, 2);
  t.regex(gone.stderr, /not_found/);
  const human = await valise.run(['recipients', 'ls']);
  t.regex(human.stdout, /^ID\s+EMAIL\s+NAME/);
});
