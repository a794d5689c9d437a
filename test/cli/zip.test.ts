import { createHash } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';
import { content } from '../helpers/transfers.ts';
import { checkZip } from '../helpers/zip.ts';
import { type Cli, cli } from './cli-harness.ts';

// `valise get --zip` through the real binary: the API's archive for a server-mode share, one
// built by the CLI from the decrypted files for an end-to-end share; both read back byte-identical.

let api: TestApi;
let ws: TestWorkspace;
let valise: Cli;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('CLI archives');
  valise = await cli(api.url, ws.keys.live);
});
test.after.always(async () => {
  await api.close();
  await rm(valise.home, { recursive: true, force: true });
});

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function send(title: string, files: Buffer[], extra: string[] = []) {
  const paths = await Promise.all(
    files.map(async (bytes, i) => {
      const path = join(valise.home, `${title}-${i}.bin`);
      await writeFile(path, bytes);
      return path;
    }),
  );
  return valise.json(['send', ...paths, '--title', title, ...extra]);
}

for (const mode of ['server', 'e2e'] as const) {
  test(`get --zip of a ${mode} share: one archive that unzip -t accepts, every file byte-identical`, async (t) => {
    const files = [content(1_500_000), content(70_001), content(10)];
    const sent = await send(`zip-${mode}`, files, mode === 'e2e' ? ['--e2e'] : []);
    const out = join(valise.home, `out-${mode}`);
    await mkdir(out);
    const got = await valise.json(['get', sent.share_url, '--wait', '--zip', '-o', out]);
    t.is(got.object, 'archive_download');
    t.is(got.built_by, mode === 'e2e' ? 'client' : 'server');
    t.is(got.path, join(out, `zip-${mode}.zip`));
    const check = await checkZip(got.path);
    t.true(check.unzipOk, check.unzipOutput);
    t.deepEqual(check.entries, Object.fromEntries(files.map((bytes, i) => [`zip-${mode}-${i}.bin`, sha(bytes)])));
    // The file exists: refused without --force, replaced with it.
    const again = await valise.run(['get', sent.share_url, '--zip', '-o', got.path]);
    t.is(again.code, 4, again.stderr);
  });
}

test('valise archive TRANSFER_ID: the owner’s ZIP of a server-mode transfer; an e2e one is refused', async (t) => {
  const files = [content(300_000), content(1000)];
  const sent = await send('owner-copy', files);
  await valise.json(['get', sent.share_url, '--wait', '-o', join(valise.home, 'owner-wait')]);
  const out = join(valise.home, 'owner-out');
  await mkdir(out);
  const got = await valise.json(['archive', sent.transfer.id, '-o', out]);
  t.is(got.path, join(out, 'owner-copy.zip'));
  const check = await checkZip(got.path);
  t.true(check.unzipOk, check.unzipOutput);
  t.deepEqual(check.entries, Object.fromEntries(files.map((bytes, i) => [`owner-copy-${i}.bin`, sha(bytes)])));
  t.is((await valise.run(['archive', sent.transfer.id, '-o', got.path])).code, 4);
  t.is((await valise.json(['archive', sent.transfer.id, '-o', got.path, '--force'])).path, got.path);

  const sealed = await send('owner-sealed', [content(100)], ['--e2e']);
  const refused = await valise.run(['archive', sealed.transfer.id, '-o', out]);
  t.is(refused.code, 2, refused.stderr);
  t.regex(refused.stderr, /end-to-end/);
});
