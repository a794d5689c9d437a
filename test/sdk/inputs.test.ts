import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import { z } from 'zod';
import { sql } from '../../lib/db/sql.ts';
import {
  FileExistsError,
  InvalidArgumentError,
  type SendFileInput,
  type SendSession,
  Valise,
  ValiseError,
} from '../../sdk/src/index.ts';
import { toDirectory } from '../../sdk/src/node.ts';
import { content, waitForTransfer } from '../helpers/transfers.ts';
import { sdkSession } from './session.ts';

// What a Node user passes to the SDK first: paths and file: URLs are files on
// disk; anything else that cannot be a file is an InvalidArgumentError naming
// the argument, thrown before any request leaves.

const sdk = sdkSession('SDK inputs');

/** A client whose every request is recorded (and still made). */
function recording() {
  const requests: string[] = [];
  const client = new Valise({
    apiKey: sdk.ws.keys.live,
    baseUrl: sdk.api.url,
    fetch: (input, init) => {
      requests.push(`${init?.method ?? 'GET'} ${String(input)}`);
      return fetch(input, init);
    },
  });
  return { client, requests };
}

async function expectInvalid(
  t: ExecutionContext,
  call: Promise<unknown>,
  param: string,
  message: RegExp,
): Promise<InvalidArgumentError | undefined> {
  const error = await t.throwsAsync(call, { instanceOf: InvalidArgumentError });
  t.true(error instanceof ValiseError, 'it is a ValiseError');
  t.is(error?.code, 'invalid_argument');
  t.is(error?.param, param);
  t.true(error?.message.startsWith(`${param}: `), `the message names ${param}: ${error?.message}`);
  t.regex(error?.message ?? '', message);
  return error;
}

for (const mode of ['server', 'e2e'] as const) {
  test(`a path string and a file: URL are sent from disk and come back byte-identical (${mode} mode)`, async (t) => {
    const first = content(3 * 1024 * 1024 + 11);
    const second = content(50_000);
    const firstPath = join(sdk.dir, `${mode}-by-path.bin`);
    const secondPath = join(sdk.dir, `${mode}-by-url.bin`);
    await writeFile(firstPath, first);
    await writeFile(secondPath, second);
    const sent = await sdk.valise.transfers.send({ mode, files: [firstPath, pathToFileURL(secondPath)] });
    t.deepEqual(
      sent.session.files.map((file) => [file.name, file.plaintextSize]),
      [
        [`${mode}-by-path.bin`, first.length],
        [`${mode}-by-url.bin`, second.length],
      ],
      'names from the base name, sizes from stat',
    );
    await waitForTransfer(sdk.api, sdk.ws.keys.live, sent.transfer.id, (transfer) => transfer.status === 'active');
    const out = join(sdk.dir, `${mode}-out`);
    await sdk.valise.transfers.download(sent.shareUrl, { to: toDirectory(out) });
    t.true((await readFile(join(out, `${mode}-by-path.bin`))).equals(first));
    t.true((await readFile(join(out, `${mode}-by-url.bin`))).equals(second));
  });
}

test('transfers.resume takes the same paths again and checks their count and sizes before sending', async (t) => {
  const path = join(sdk.dir, 'resumable.bin');
  await writeFile(path, content(10_000));
  const session: SendSession = await sdk.valise.transfers.prepare({ files: [path] });
  const { client, requests } = recording();
  await expectInvalid(t, client.transfers.resume(session, { files: [path, path] }), 'files', /1 file.*2 were given/);
  await writeFile(join(sdk.dir, 'other-size.bin'), content(9_999));
  await expectInvalid(
    t,
    client.transfers.resume(session, { files: [join(sdk.dir, 'other-size.bin')] }),
    'files[0]',
    /9999 bytes.*10000/,
  );
  t.deepEqual(requests, [], 'no request was made');
  const resumed = await client.transfers.resume(session, { files: [path] });
  t.is(resumed.transfer.id, session.transfer.id);
});

test('every input that cannot be a file is an InvalidArgumentError naming it, and no request is made', async (t) => {
  const { client, requests } = recording();
  const good = join(sdk.dir, 'good.txt');
  await writeFile(good, 'fine\n');
  const folder = join(sdk.dir, 'a-folder');
  await mkdir(folder, { recursive: true });
  const send = (files: unknown) => client.transfers.send({ files: files as SendFileInput[] });

  await expectInvalid(t, send([]), 'files', /at least one file/);
  await expectInvalid(t, send(undefined), 'files', /got undefined/);
  await expectInvalid(t, send(good), 'files', /an array.*got string/);
  await expectInvalid(t, send([good, folder]), 'files[1]', /is a directory/);
  await expectInvalid(t, send([join(sdk.dir, 'missing.bin')]), 'files[0]', /no such file/);
  await expectInvalid(t, send(['']), 'files[0]', /empty path/);
  await expectInvalid(t, send([new URL('http://127.0.0.1:9/file.bin')]), 'files[0]', /file: URL.*got an http: URL/);
  await expectInvalid(t, send([good, good, null]), 'files[2]', /got null$/);
  await expectInvalid(t, send([42]), 'files[0]', /expected a path, a file: URL, a Blob or File.*; got number$/);
  await expectInvalid(t, send([{ nom: 'x', taille: 3 }]), 'files[0]', /got an object without name, size/);
  await expectInvalid(
    t,
    send([{ name: 'x.bin', size: -1, stream: () => new Blob([]).stream() }]),
    'files[0].size',
    /non-negative integer/,
  );
  await expectInvalid(t, send([{ name: '', size: 1, stream: () => new Blob([]).stream() }]), 'files[0].name', /empty/);
  await expectInvalid(t, send([new Blob(['no name'])]), 'files[0]', /Blob has no name.*\{ blob, name \}/);
  await expectInvalid(t, send([{ blob: 'not a blob', name: 'x' }]), 'files[0].blob', /expected a Blob; got string/);
  await expectInvalid(
    t,
    client.transfers.send({ files: [good], mode: 'e3e' as 'e2e' }),
    'mode',
    /'server' or 'e2e'; got "e3e"/,
  );
  await expectInvalid(t, client.transfers.send(undefined as never), 'params', /expected an object/);
  await expectInvalid(t, client.uploads.put(`${sdk.api.url}/v1/uploads/x`, 7 as never), 'file', /got number/);

  // Downloads: a link that is not one, and no `to`, are refused before a download is counted.
  await expectInvalid(
    t,
    client.transfers.download('not a link', { to: () => new WritableStream() }),
    'shareUrl',
    /URL/,
  );
  await expectInvalid(t, client.transfers.download(`${sdk.api.url}/t/abc`, {} as never), 'to', /function/);
  await expectInvalid(
    t,
    client.transfers.download(`${sdk.api.url}/t/abc`, { to: () => new WritableStream(), fileIds: 'f' as never }),
    'fileIds',
    /array of file ids/,
  );
  t.deepEqual(requests, [], 'no request was made');
});

test('client options a user gets wrong are InvalidArgumentErrors naming the option', (t) => {
  const invalid = (make: () => unknown, param: string, message: RegExp) => {
    const error = t.throws(make, { instanceOf: InvalidArgumentError });
    t.is(error?.param, param);
    t.regex(error?.message ?? '', message);
  };
  invalid(() => new Valise({ baseUrl: '127.0.0.1:8080' }), 'baseUrl', /http: or https: URL/);
  invalid(() => new Valise(undefined as never), 'options', /expected an object/);
  invalid(() => new Valise({ baseUrl: sdk.api.url, timeoutMs: -5 }), 'timeoutMs', /positive/);
  invalid(() => new Valise({ baseUrl: sdk.api.url, maxRetries: 1.5 }), 'maxRetries', /non-negative integer/);
  invalid(() => new Valise({ baseUrl: sdk.api.url, apiKey: 42 as never }), 'apiKey', /string/);
  t.notThrows(() => new Valise({ baseUrl: `${sdk.api.url}/` }));
});

test('toDirectory refuses an existing file before a download is counted, replaces it with overwrite, and keeps odd names inside', async (t) => {
  const bytes = content(4096);
  const sent = await sdk.valise.transfers.send({
    files: [
      { blob: new Blob([new Uint8Array(bytes)]), name: 'dots' },
      { blob: new Blob([new Uint8Array(bytes)]), name: 'kept.txt' },
      { blob: new Blob([new Uint8Array(bytes)]), name: '.profile' },
    ],
  });
  // The API refuses `..` as a name now (docs/conventions.md, "Names and titles"); one stored before
  // that rule, or served by another server, is what toDirectory must keep inside its folder.
  await sdk.api.services.db.query(sql.type(z.object({}))`
    UPDATE transfer_files SET name = '..' WHERE transfer_id = ${sent.transfer.id} AND name = 'dots'`);
  await waitForTransfer(sdk.api, sdk.ws.keys.live, sent.transfer.id, (transfer) => transfer.status === 'active');
  const out = join(sdk.dir, 'odd');
  await mkdir(out);
  await writeFile(join(out, 'kept.txt'), 'mine\n');

  const refused = await t.throwsAsync(sdk.valise.transfers.download(sent.shareUrl, { to: toDirectory(out) }), {
    instanceOf: FileExistsError,
  });
  t.is(refused?.code, 'file_exists');
  t.is(refused?.path, join(out, 'kept.txt'));
  t.regex(refused?.message ?? '', /kept\.txt already exists/);
  t.is(await readFile(join(out, 'kept.txt'), 'utf8'), 'mine\n', 'the existing file is untouched');
  t.deepEqual((await readdir(out)).sort(), ['kept.txt'], 'nothing else was written');
  t.is((await sdk.valise.transfers.get(sent.transfer.id)).total_downloads, 0, 'no download was counted');

  const replacing = toDirectory(out, { overwrite: true });
  const result = await sdk.valise.transfers.download(sent.shareUrl, { to: replacing });
  t.is(result.files.length, 3);
  const paths = result.files.map((file) => replacing.paths.get(file.id));
  t.deepEqual(paths, [join(out, '_..'), join(out, 'kept.txt'), join(out, '_.profile')]);
  for (const path of paths) t.true((await readFile(path ?? '')).equals(bytes));
  t.deepEqual((await readdir(out)).sort(), ['_..', '_.profile', 'kept.txt'], 'no temporary file is left');
});

test('transfers.download takes a directory path or file: URL as `to`, written as toDirectory writes it', async (t) => {
  const first = content(200_000);
  const second = content(5_000);
  const sent = await sdk.valise.transfers.send({
    files: [
      { blob: new Blob([new Uint8Array(first)]), name: 'report.pdf' },
      { blob: new Blob([new Uint8Array(second)]), name: '.hidden.txt' },
    ],
  });
  await waitForTransfer(sdk.api, sdk.ws.keys.live, sent.transfer.id, (transfer) => transfer.status === 'active');

  // A relative path, as `./dir` would be, resolved against the working directory; created if missing.
  const out = join(sdk.dir, 'by-path', 'nested');
  const result = await sdk.valise.transfers.download(sent.shareUrl, { to: relative(process.cwd(), out) });
  t.deepEqual(
    result.files.map((file) => [file.name, file.bytes, file.path && resolve(file.path)]),
    [
      ['report.pdf', first.length, join(out, 'report.pdf')],
      ['.hidden.txt', second.length, join(out, '_.hidden.txt')],
    ],
    'each file says where it went, under a safe name',
  );
  t.true((await readFile(join(out, 'report.pdf'))).equals(first));
  t.true((await readFile(join(out, '_.hidden.txt'))).equals(second));
  t.is((await sdk.valise.transfers.get(sent.transfer.id)).total_downloads, 1);

  // As with toDirectory(out): an existing file is refused before a download is counted.
  const refused = await t.throwsAsync(sdk.valise.transfers.download(sent.shareUrl, { to: out }), {
    instanceOf: FileExistsError,
  });
  t.is(refused?.path, join(out, 'report.pdf'));
  t.is((await sdk.valise.transfers.get(sent.transfer.id)).total_downloads, 1, 'no download was counted');

  const byUrl = join(sdk.dir, 'by-url');
  await sdk.valise.transfers.download(sent.shareUrl, { to: pathToFileURL(byUrl) });
  t.deepEqual((await readdir(byUrl)).sort(), ['_.hidden.txt', 'report.pdf']);
  t.true((await readFile(join(byUrl, 'report.pdf'))).equals(first));
});

test('a `to` that is no directory is refused, naming `to`, before any request', async (t) => {
  const { client, requests } = recording();
  const link = `${sdk.api.url}/t/abcdefghij`;
  await expectInvalid(t, client.transfers.download(link, { to: '' }), 'to', /empty path/);
  await expectInvalid(
    t,
    client.transfers.download(link, { to: new URL('https://example.com/in/') }),
    'to',
    /file: URL/,
  );
  await expectInvalid(t, client.transfers.download(link, { to: 42 as never }), 'to', /directory's path, or a function/);
  t.deepEqual(requests, []);
});
