import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { z } from 'zod';
import { sql } from '../../lib/db/sql.ts';
import { Valise } from '../../sdk/src/index.ts';
import { startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { content, waitForTransfer } from '../helpers/transfers.ts';
import { type Cli, cli } from './cli-harness.ts';

// What the real binary prints and writes when names come from someone else:
// terminal control sequences in names, titles and messages are shown as
// visible text (never interpreted), --json stays exact, and `get` never
// replaces a file without --force nor writes outside its folder.

let api: TestApi;
let ws: TestWorkspace;
let valise: Cli;
let sdk: Valise;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('CLI safety');
  valise = await cli(api.url, ws.keys.live);
  sdk = new Valise({ apiKey: ws.keys.live, baseUrl: api.url });
});
test.after.always(async () => {
  await api.close();
  await rm(valise.home, { recursive: true, force: true });
});

const HOSTILE_NAME = '\x1b]0;pwned\x07evil\x1b[2J.txt';
const HOSTILE_TITLE = 'Quarterly \u202eftp.exe\u202c \x1b[31mred\x9b1m\r\nforged line';
// ESC, BEL, CSI (8-bit), CR, the bidi embeddings, overrides and isolates.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const DANGEROUS = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

function visibleOnly(t: { false: (value: boolean, message?: string) => void }, text: string, where: string) {
  const found = DANGEROUS.exec(text);
  t.false(
    found !== null,
    `${where} holds U+${found?.[0].codePointAt(0)?.toString(16).padStart(4, '0')}: ${JSON.stringify(text)}`,
  );
}

async function sendBlob(
  files: Array<{ name: string; bytes: Uint8Array }>,
  fields: Record<string, unknown> = {},
  mode: 'server' | 'e2e' = 'server',
) {
  const sent = await sdk.transfers.send({
    ...fields,
    mode,
    files: files.map((file) => ({ blob: new Blob([new Uint8Array(file.bytes)]), name: file.name })),
  });
  await waitForTransfer(api, ws.keys.live, sent.transfer.id, (transfer) => transfer.status === 'active');
  return sent;
}

test('names and titles carrying terminal escapes print as visible text; --json keeps them exact', async (t) => {
  const bytes = content(2000);
  const sent = await sendBlob([{ name: 'plain.txt', bytes }], { transfer_title: 'Quarterly' });
  // The API refuses such names and titles (docs/conventions.md, "Names and titles"); one stored before
  // that rule, or sent by another server, is what the CLI must survive.
  await api.services.db.query(sql.type(z.object({}))`
    UPDATE transfer_files SET name = ${HOSTILE_NAME} WHERE transfer_id = ${sent.transfer.id}`);
  await api.services.db.query(sql.type(z.object({}))`
    UPDATE transfers SET transfer_title = ${HOSTILE_TITLE} WHERE id = ${sent.transfer.id}`);

  const listed = await valise.run(['ls', '--search', 'Quarterly']);
  t.is(listed.code, 0, listed.stderr);
  const shown = await valise.run(['show', sent.transfer.id]);
  t.is(shown.code, 0, shown.stderr);
  const out = join(valise.home, 'escapes');
  const got = await valise.run(['get', sent.shareUrl, '-o', out]);
  t.is(got.code, 0, got.stderr);
  for (const [where, result] of Object.entries({ ls: listed, show: shown, get: got })) {
    visibleOnly(t, result.stdout, `${where} stdout`);
    visibleOnly(t, result.stderr, `${where} stderr`);
  }
  // Shown, escaped, rather than dropped: the reader sees that the name is odd.
  t.true(shown.stdout.includes('\\x1b]0;pwned\\x07evil\\x1b[2J.txt'), shown.stdout);
  t.true(shown.stdout.includes('Quarterly \\u202eftp.exe\\u202c \\x1b[31mred\\x9b1m\\r\\nforged line'), shown.stdout);
  t.true(got.stderr.includes('\\x1b]0;pwned\\x07evil'), 'the progress line shows the name escaped');
  // The file on disk gets a safe name; the path printed is the one written.
  t.deepEqual(await readdir(out), ['_]0;pwned_evil_[2J.txt']);
  t.is(got.stdout, `${join(out, '_]0;pwned_evil_[2J.txt')}\n`);

  const json = await valise.run(['show', sent.transfer.id, '--json']);
  t.is(json.code, 0, json.stderr);
  visibleOnly(t, json.stdout, 'show --json stdout');
  const parsed = JSON.parse(json.stdout);
  t.is(parsed.files[0].name, HOSTILE_NAME, '--json gives the exact name');
  t.is(parsed.transfer_title, HOSTILE_TITLE, '--json gives the exact title');
});

test('messages that echo user input or come from the server print as visible text', async (t) => {
  const usage = await valise.run(['ls', '\x1b]0;pwned\x07', '\u202eoops']);
  t.is(usage.code, 1);
  visibleOnly(t, usage.stderr, 'usage error');
  t.true(usage.stderr.includes('Unexpected argument: \\x1b]0;pwned\\x07'), usage.stderr);
  const json = await valise.run(['ls', '\x1b]0;pwned\x07', '--json']);
  visibleOnly(t, json.stderr, 'usage error with --json');
  t.is(JSON.parse(json.stderr).error.message, 'Unexpected argument: \x1b]0;pwned\x07', 'exact in JSON');

  const notFound = await valise.run(['get', `${api.url}/t/\x1b[2Jnope\u202e`]);
  t.is(notFound.code, 2);
  visibleOnly(t, notFound.stderr, 'API error');

  // A server (or a proxy in front of it) whose error message and members carry escapes.
  const hostile = await startReceiver();
  t.teardown(() => hostile.close());
  const error = {
    code: 'scope_missing',
    message: '\x1b]0;pwned\x07Denied\x1b[2J',
    required_scope: 'transfers:\u202eread',
    request_id: 'req_\x1b[1m',
  };
  hostile.answer(() => ({
    status: 403,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error }),
  }));
  const denied = await valise.run(['ls'], { env: { VALISE_BASE_URL: hostile.url('') } });
  t.is(denied.code, 2);
  visibleOnly(t, denied.stderr, 'server error message');
  t.true(denied.stderr.includes('error: \\x1b]0;pwned\\x07Denied\\x1b[2J (scope_missing)'), denied.stderr);
  t.true(denied.stderr.includes('transfers:\\u202eread'), denied.stderr);
  const deniedJson = await valise.run(['ls', '--json'], { env: { VALISE_BASE_URL: hostile.url('') } });
  visibleOnly(t, deniedJson.stderr, 'server error with --json');
  t.deepEqual(JSON.parse(deniedJson.stderr).error, error, 'the error object is exact JSON');
});

for (const mode of ['server', 'e2e'] as const) {
  test(`get refuses to replace an existing file (exit 4, nothing counted) unless --force (${mode} mode)`, async (t) => {
    const bytes = content(30_000);
    const sent = await sendBlob(
      [
        { name: 'fresh.bin', bytes },
        { name: 'same.txt', bytes },
      ],
      {},
      mode,
    );
    const out = join(valise.home, `existing-${mode}`);
    await mkdir(out);
    await writeFile(join(out, 'same.txt'), 'mine\n');

    const refused = await valise.run(['get', sent.shareUrl, '-o', out]);
    t.is(refused.code, 4, refused.stderr);
    t.true(refused.stderr.includes(`${join(out, 'same.txt')} already exists`), refused.stderr);
    t.regex(refused.stderr, /--force/);
    t.is(await readFile(join(out, 'same.txt'), 'utf8'), 'mine\n', 'the existing file is untouched');
    t.deepEqual(await readdir(out), ['same.txt'], 'no other file was written');
    const refusedJson = await valise.run(['get', sent.shareUrl, '-o', out, '--json']);
    t.is(refusedJson.code, 4);
    t.is(refusedJson.stdout, '');
    t.is(JSON.parse(refusedJson.stderr).error.code, 'file_exists');
    t.is((await sdk.transfers.get(sent.transfer.id)).total_downloads, 0, 'no download was counted');

    const forced = await valise.json(['get', sent.shareUrl, '-o', out, '--force']);
    t.deepEqual(
      forced.files.map((file: { path: string }) => file.path),
      [join(out, 'fresh.bin'), join(out, 'same.txt')],
    );
    t.true((await readFile(join(out, 'same.txt'))).equals(bytes), 'replaced with --force');
    t.true((await readFile(join(out, 'fresh.bin'))).equals(bytes));
    t.deepEqual((await readdir(out)).sort(), ['fresh.bin', 'same.txt'], 'no temporary file is left');
  });
}

test('names from the server that are paths or dot names land inside the output folder', async (t) => {
  const bytes = content(1000);
  const sent = await sendBlob([
    { name: 'up.txt', bytes },
    { name: 'abs.txt', bytes },
    { name: 'dots.txt', bytes },
    { name: '.bashrc', bytes },
  ]);
  // The API refuses / and \ in names, and . and ..; a server that sends them anyway is what `get` must survive.
  await api.services.db.query(sql.type(z.object({}))`
    UPDATE transfer_files SET name = CASE name
      WHEN 'up.txt' THEN '../up.txt' WHEN 'abs.txt' THEN '/tmp/abs.txt' WHEN 'dots.txt' THEN '..' ELSE name END
    WHERE transfer_id = ${sent.transfer.id}`);
  const parent = join(valise.home, 'paths');
  const out = join(parent, 'inner');
  const got = await valise.json(['get', sent.shareUrl, '-o', out]);
  t.deepEqual(
    got.files.map((file: { name: string; path: string }) => [file.name, file.path]),
    [
      ['../up.txt', join(out, 'up.txt')],
      ['/tmp/abs.txt', join(out, 'abs.txt')],
      ['..', join(out, '_..')],
      ['.bashrc', join(out, '_.bashrc')],
    ],
  );
  t.deepEqual(await readdir(parent), ['inner'], 'nothing was written beside the folder');
  t.deepEqual((await readdir(out)).sort(), ['_..', '_.bashrc', 'abs.txt', 'up.txt']);
  for (const name of await readdir(out)) t.true((await readFile(join(out, name))).equals(bytes));
});
