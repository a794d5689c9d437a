import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { eventually, startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';
import { uniqueAddress } from '../helpers/mail.ts';
import { content } from '../helpers/transfers.ts';
import { checkZip } from '../helpers/zip.ts';
import { cli } from './cli-harness.ts';

// `valise coffre …` through the real binary against the real API (docs/cli.md).

let api: TestApi;
let ws: TestWorkspace;
const cleanup: string[] = [];
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('CLI vaults');
});
test.after.always(async () => {
  await api.close();
  for (const path of cleanup) await rm(path, { recursive: true, force: true });
});

test('coffre create, put, items, get, invite, members, log, revoke and rm', async (t) => {
  const valise = await cli(api.url, ws.keys.live);
  cleanup.push(valise.home);
  const work = await mkdtemp(join(tmpdir(), 'valise-coffre-'));
  cleanup.push(work);
  const bytes = content(50_000);
  const source = join(work, 'term-sheet.pdf');
  await writeFile(source, bytes);

  const created = await valise.json(['coffre', 'create', '--name', 'From the CLI', '--expires', '30d']);
  t.is(created.object, 'coffre');
  t.truthy(created.expires_at);
  const id = created.id as string;

  const put = await valise.json(['coffre', 'put', id, source]);
  const itemId = put.data[0].id as string;
  t.regex(itemId, /^cofi_/);
  await eventually(async () => {
    const listed = await valise.json(['coffre', 'items', id]);
    return listed.data.find((i: { id: string; status: string }) => i.id === itemId && i.status === 'available');
  }, 60_000);

  const out = join(work, 'out');
  const got = await valise.json(['coffre', 'get', id, itemId, '-o', out]);
  t.true((await readFile(got.path)).equals(bytes), 'byte-identical');
  const zipped = await valise.json(['coffre', 'zip', id, itemId, '-o', join(work, 'binder.zip')]);
  t.is(zipped.path, join(work, 'binder.zip'));
  const check = await checkZip(zipped.path);
  t.true(check.unzipOk, check.unzipOutput);
  t.deepEqual(Object.keys(check.entries), ['term-sheet.pdf']);

  const email = uniqueAddress('cli-member');
  const invited = await valise.run(['coffre', 'invite', id, email, '--access', 'download', '--link-valid', '48h']);
  t.is(invited.code, 0, invited.stderr);
  t.regex(invited.stdout.trim(), /\/v\/[\w-]+\.[\w-]+$/);
  const token = invited.stdout.trim().split('/').at(-1);
  t.is((await api.call('GET', `/v1/coffre-access/${token}`)).status, 200);

  const members = await valise.json(['coffre', 'members', id]);
  t.is(members.data.length, 1);
  t.is(members.data[0].email, email);
  const until = Date.parse(members.data[0].invitation_expires_at) - Date.now();
  t.true(until > 47 * 3_600_000 && until <= 48 * 3_600_000);

  const log = await valise.run(['coffre', 'log', id]);
  t.is(log.code, 0, log.stderr);
  t.true(log.stdout.includes(email));
  t.true(log.stdout.includes('opened'));

  const revoked = await valise.json(['coffre', 'revoke', id, members.data[0].id]);
  t.is(revoked.status, 'revoked');
  t.is((await api.call('GET', `/v1/coffre-access/${token}`)).status, 403);

  const shown = await valise.run(['coffre', 'show', id]);
  t.is(shown.code, 0, shown.stderr);
  t.true(shown.stdout.includes('From the CLI'));
  t.true((await valise.json(['coffre', 'ls'])).data.some((c: { id: string }) => c.id === id));

  t.deepEqual(await valise.json(['coffre', 'rm', id]), { id, object: 'coffre', deleted: true, items_destroyed: 1 });
  const missing = await valise.run(['coffre', 'show', id]);
  t.is(missing.code, 2);
  t.regex(missing.stderr, /not_found/);
  const usage = await valise.run(['coffre', 'invite', id, email, '--access', 'admin']);
  t.is(usage.code, 1);
});
