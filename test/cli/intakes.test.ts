import { randomBytes } from 'node:crypto';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { eventually, startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';
import { cli } from './cli-harness.ts';

// `valise intake …` through the real binary against the real API (docs/cli.md,
// docs/intakes.md): the owner's key pair lives in a file on this machine, a
// submitter sends with the publishable key alone, and the owner decrypts here.

let api: TestApi;
let ws: TestWorkspace;
const homes: string[] = [];
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('CLI intakes');
});
test.after.always(async () => {
  await api.close();
  for (const home of homes) await rm(home, { recursive: true, force: true });
});

test('keygen, create, submit and get an end-to-end document, decrypted only with the key file', async (t) => {
  const owner = await cli(api.url, ws.keys.live);
  homes.push(owner.home);
  const keyFile = join(owner.home, 'intake.key');
  const key = await owner.json(['intake', 'keygen', '-o', keyFile, '--kem', 'DHKEM-X25519']);
  t.is(key.kem, 'DHKEM-X25519');
  t.is((await stat(keyFile)).mode & 0o777, 0o600);
  // A key file is never replaced.
  const again = await owner.run(['intake', 'keygen', '-o', keyFile]);
  t.not(again.code, 0);
  t.regex(again.stderr, /exists/);

  const created = await owner.json(['intake', 'create', '--title', 'Passports', '--key', keyFile]);
  t.is(created.encryption_mode, 'e2e_asym');
  t.is(created.owner_public_key.fingerprint, key.fingerprint);

  const submitter = await cli(api.url);
  homes.push(submitter.home);
  const files = [join(submitter.home, 'passport.pdf'), join(submitter.home, 'visa.jpg')];
  const contents = [randomBytes(200_000), randomBytes(1234)];
  for (const [i, path] of files.entries()) await writeFile(path, contents[i] ?? Buffer.alloc(0));
  const submitted = await submitter.json([
    'intake',
    'submit',
    created.id,
    ...files,
    '--publishable-key',
    created.publishable_key.key,
    '--reference',
    'CASE-7',
  ]);
  const docId = submitted.document.id as string;

  await eventually(async () => {
    const listed = await owner.json(['intake', 'docs', created.id]);
    return listed.data.some((d: { id: string; status: string }) => d.id === docId && d.status === 'received')
      ? true
      : undefined;
  }, 60_000);

  const withoutKey = await owner.run(['intake', 'get', created.id, docId]);
  t.not(withoutKey.code, 0);
  t.regex(withoutKey.stderr, /--key/);

  const out = join(owner.home, 'received');
  const got = await owner.json(['intake', 'get', created.id, docId, '--key', keyFile, '-o', out]);
  t.is(got.files.length, 2);
  for (const [i, name] of ['passport.pdf', 'visa.jpg'].entries()) {
    t.true((await readFile(join(out, name))).equals(contents[i] ?? Buffer.alloc(1)), name);
  }

  // Another intake's key does not open it.
  const otherKey = join(owner.home, 'other.key');
  await owner.json(['intake', 'keygen', '-o', otherKey, '--kem', 'DHKEM-X25519']);
  const wrong = await owner.run(['intake', 'get', created.id, docId, '--key', otherKey, '-o', join(owner.home, 'x')]);
  t.not(wrong.code, 0);
  t.regex(wrong.stderr, /does not open/);
});

test('a server-mode intake: created with --server, fetched once scanned, closed and deleted', async (t) => {
  const owner = await cli(api.url, ws.keys.live);
  homes.push(owner.home);
  const created = await owner.json(['intake', 'create', '--title', 'Invoices', '--server', '--max-submissions', '3']);
  t.is(created.encryption_mode, 'server');
  const path = join(owner.home, 'invoice.pdf');
  const data = randomBytes(50_000);
  await writeFile(path, data);
  const submitted = await owner.json([
    'intake',
    'submit',
    created.id,
    path,
    '--publishable-key',
    created.publishable_key.key,
  ]);
  const docId = submitted.document.id as string;
  await eventually(async () => {
    const listed = await owner.json(['intake', 'docs', created.id]);
    return listed.data.some((d: { id: string; status: string }) => d.id === docId && d.status === 'available')
      ? true
      : undefined;
  }, 60_000);
  const out = join(owner.home, 'in');
  await owner.json(['intake', 'get', created.id, docId, '-o', out]);
  t.true((await readFile(join(out, 'invoice.pdf'))).equals(data));

  t.is((await owner.json(['intake', 'close', created.id])).status, 'closed');
  const shown = await owner.run(['intake', 'show', created.id]);
  t.regex(shown.stdout, /closed \(owner\)/);
  t.true((await owner.json(['intake', 'rm', created.id])).deleted);
  const ls = await owner.json(['intake', 'ls']);
  t.false(ls.data.some((i: { id: string }) => i.id === created.id));
});
