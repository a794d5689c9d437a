import { createHash } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';
import { content } from '../helpers/transfers.ts';
import { type Cli, cli } from './cli-harness.ts';

// `valise send`, `get` and `resume` through the real binary, against the real
// API and worker: what is received is byte for byte what was sent.

const MiB = 1024 * 1024;

let api: TestApi;
let ws: TestWorkspace;
let valise: Cli;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('CLI transfers');
  valise = await cli(api.url, ws.keys.live);
});
test.after.always(async () => {
  await api.close();
  await rm(valise.home, { recursive: true, force: true });
});

async function fileOf(name: string, bytes: Buffer): Promise<string> {
  const path = join(valise.home, name);
  await writeFile(path, bytes);
  return path;
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function receivedInto(directory: string, names: string[]) {
  return Promise.all(names.map((name) => readFile(join(directory, name))));
}

test('send one file with --json, then get it byte-identical into -o DIR', async (t) => {
  const bytes = content(2 * MiB + 5);
  const path = await fileOf('one.bin', bytes);
  const sent = await valise.json(['send', path, '--title', 'CLI one', '--expires', '24h', '--max-downloads', '3']);
  t.is(sent.object, 'sent_transfer');
  t.regex(sent.share_url, /^http:\/\/127\.0\.0\.1:\d+\/t\/\w+$/);
  t.is(sent.transfer.transfer_title, 'CLI one');
  t.deepEqual(
    sent.files.map((f: { name: string; size: number }) => [f.name, f.size]),
    [['one.bin', bytes.length]],
  );

  const out = join(valise.home, 'in-one');
  const got = await valise.json(['get', sent.share_url, '--wait', '-o', out]);
  t.is(got.object, 'download');
  t.is(got.files[0].bytes, bytes.length);
  const [received] = await receivedInto(out, ['one.bin']);
  t.is(sha(received as Buffer), sha(bytes));

  const shown = await valise.json(['show', sent.transfer.id]);
  t.is(shown.max_downloads, 3);
  t.is(shown.total_downloads, 1);
});

test('send several files prints the share link on stdout and progress on stderr', async (t) => {
  const files = [content(700_000), content(1_300_000), content(12)];
  const paths = await Promise.all(files.map((bytes, i) => fileOf(`many-${i}.dat`, bytes)));
  const result = await valise.run(['send', ...paths, '--title', 'CLI several']);
  t.is(result.code, 0, result.stderr);
  const link = result.stdout.trim();
  t.regex(link, /^http:\/\/127\.0\.0\.1:\d+\/t\/\w+$/);
  t.regex(result.stderr, /\[1\/3\] many-0\.dat: .*done/);
  t.regex(result.stderr, /\[3\/3\] many-2\.dat: .*done/);
  t.regex(result.stderr, /Sent 3 files/);

  const out = join(valise.home, 'in-many');
  const got = await valise.run(['get', link, '--wait', '-o', out]);
  t.is(got.code, 0, got.stderr);
  t.deepEqual(
    got.stdout.trim().split('\n'),
    paths.map((_, i) => join(out, `many-${i}.dat`)),
  );
  const received = await receivedInto(out, ['many-0.dat', 'many-1.dat', 'many-2.dat']);
  t.deepEqual(
    received.map((b) => sha(b)),
    files.map(sha),
  );
});

test('e2e send and get round-trip: the link carries #k= and the files come back identical', async (t) => {
  const files = [content(3 * MiB + 17), content(65_536)];
  const paths = await Promise.all(files.map((bytes, i) => fileOf(`secret-${i}.bin`, bytes)));
  const sent = await valise.json(['send', ...paths, '--e2e']);
  t.regex(sent.share_url, /#k=[\w-]{43}$/);
  t.is(sent.transfer.encryption_mode, 'e2e');

  const out = join(valise.home, 'in-e2e');
  const got = await valise.json(['get', sent.share_url, '--wait', '-o', out]);
  t.is(got.transfer.encryption_mode, 'e2e');
  const received = await receivedInto(out, ['secret-0.bin', 'secret-1.bin']);
  t.deepEqual(
    received.map((b) => sha(b)),
    files.map(sha),
  );

  // Without the key the CLI refuses before counting a download.
  const downloads = async () =>
    (await api.call('GET', `/v1/transfers/${sent.transfer.id}`, { key: ws.keys.live })).body.total_downloads;
  t.is(await downloads(), 1);
  const keyless = await valise.run(['get', sent.share_url.replace(/#.*$/, ''), '-o', out]);
  t.is(keyless.code, 2);
  t.regex(keyless.stderr, /integrity_error/);
  t.is(await downloads(), 1, 'the refused get counted no download');
});

test('--password - reads the password from stdin on both sides, and get without it is refused', async (t) => {
  const bytes = content(40_000);
  const path = await fileOf('locked.bin', bytes);
  const sent = await valise.json(['send', path, '--password', '-'], { input: 'two words \n' });
  t.true(sent.transfer.password_protected);

  const out = join(valise.home, 'in-locked');
  const refused = await valise.run(['get', sent.share_url, '--wait', '-o', out]);
  t.is(refused.code, 2);
  t.regex(refused.stderr, /password/i);
  const wrong = await valise.run(['get', sent.share_url, '-o', out, '--password', '-'], { input: 'two words\n' });
  t.is(wrong.code, 2, 'the trailing space is part of the password');
  const got = await valise.json(['get', sent.share_url, '-o', out, '--password', '-'], { input: 'two words \n' });
  t.is(got.files[0].bytes, bytes.length);
  const [received] = await receivedInto(out, ['locked.bin']);
  t.is(sha(received as Buffer), sha(bytes));
});

test('a killed send is finished by `valise resume`, sending only what is missing', async (t) => {
  // Its own config directory: the other tests' sends must not show up as pending here.
  const valise = await cli(api.url, ws.keys.live);
  t.teardown(() => rm(valise.home, { recursive: true, force: true }));
  const bytes = content(40 * MiB);
  const path = join(valise.home, 'big.bin');
  await writeFile(path, bytes);
  const child = valise.spawn(['send', path, '--limit-rate', '8M']);
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const percents = [...stderr.matchAll(/\((\d+)%\)/g)].map((m) => Number(m[1]));
      if (percents.some((p) => p >= 45)) {
        child.kill('SIGKILL');
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`send exited (${code}) before it was killed: ${stderr}`)));
  });
  await new Promise((resolve) => child.once('exit', resolve));

  const listed = await valise.json(['resume', '--list']);
  t.is(listed.data.length, 1);
  const transferId = listed.data[0].transfer_id;

  const resumed = await valise.run(['resume']);
  t.is(resumed.code, 0, resumed.stderr);
  const firstPercent = Number(/\((\d+)%\)/.exec(resumed.stderr)?.[1]);
  t.true(firstPercent >= 15, `resume started at ${firstPercent}%: ${resumed.stderr}`);
  const link = resumed.stdout.trim();
  t.regex(link, /\/t\/\w+$/);
  t.is((await valise.json(['resume', '--list'])).data.length, 0);

  const out = join(valise.home, 'in-big');
  await valise.json(['get', link, '--wait', '-o', out]);
  const [received] = await receivedInto(out, ['big.bin']);
  t.is(sha(received as Buffer), sha(bytes));
  t.is((await valise.json(['show', transferId])).status, 'active');
});

test('send --country restricts the transfer; a download from an address of unknown country is refused', async (t) => {
  const bytes = content(1024);
  const path = await fileOf('countries.bin', bytes);
  const sent = await valise.json(['send', path, '--country', 'fr', '--country', 'US']);
  t.deepEqual(sent.transfer.allowed_countries, ['FR', 'US']);
  // The test API sees the loopback address, whose country is not known (docs/transfers.md, "Countries").
  const got = await valise.run(['get', sent.share_url, '--wait', '-o', join(valise.home, 'in-countries')]);
  t.not(got.code, 0);
  t.regex(got.stderr, /not in one of them/, 'the CLI explains the refusal');
  const bad = await valise.run(['send', path, '--country', 'EU']);
  t.not(bad.code, 0);
  t.regex(bad.stderr, /allowed_countries/);
});
