import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import test from 'ava';
import { signToken } from '../lib/crypto/signed-token.ts';
import { createTransferQueries } from '../lib/db/queries/transfers.ts';
import { sql } from '../lib/db/sql.ts';
import { safeName } from '../sdk/src/zip.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { type ApiProcess, startApiProcess } from './helpers/api-processes.ts';
import { envelopeProblem } from './helpers/error-envelope.ts';
import { storedFor } from './helpers/storage.ts';
import { content, createTransfer, fetchBytes, links, put, waitForTransfer } from './helpers/transfers.ts';
import { checkZip } from './helpers/zip.ts';

// Issue #26, hostile uploads: what a client gets for lying about its bytes, reusing or forging an
// upload URL, trickling its request, naming its files to hurt the people who download them, or
// declaring thousands of files. Each is refused with the spec's envelope, nothing partial becomes
// visible (share link, downloads, archive, the API's file lists, a complete object in storage), and
// the API's memory stays flat.
//
// What other files already prove is not repeated here:
// - bytes: more or fewer than declared by PUT, Content-Length or chunked (transfers.test.ts, "a PUT
//   with more or fewer bytes"); chunks off a part boundary or lying about their length
//   (chunked-upload.test.ts); tus lengths, offsets and versions (tus.test.ts, "protocol errors");
// - tokens: forged, spliced, of another file, transfer or purpose, expired, on PUT, HEAD and GET
//   (capability-tokens.test.ts); tus with another file's URL (tus.test.ts, "isolation"); URLs after
//   revocation, deadline, expiry or infection (upload-after-end.test.ts);
// - names: controls, bidi, `.`/`..` and separators refused in every family, NFC and other scripts
//   kept (conventions.test.ts, "names and titles"); the ZIP writer's names (zip-writer.test.ts);
// - slow clients: a stalled or trickling PUT (UPLOAD_IDLE_TIMEOUT, UPLOAD_REQUEST_TIMEOUT), upload
//   slots, their part buffers (slow-clients.test.ts); the lease of a slow PUT (upload-lease.test.ts).
//
// Two APIs: one in this process (workspaces, the database, storage), and a real `node api/main.ts`
// with short timeouts and 10,000 files allowed per transfer, whose resident memory is read from
// /proc. The tests that use the process run serially, before the others.

const MiB = 1024 * 1024;
const FILES = 10_000;
const HEADERS_TIMEOUT_MS = 2_000;

let api: TestApi;
let ws: TestWorkspace;
let proc: ApiProcess;
/** The API process's resident set (MiB) after its warm-up, and after the 10,000-file transfer. */
let rssBefore: number;
let rssAfterBigTransfer: number;

test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Upload abuse');
  proc = await startApiProcess({
    TRANSFER_MAX_FILES: String(FILES),
    REQUEST_HEADERS_TIMEOUT: `${HEADERS_TIMEOUT_MS}ms`,
    UPLOAD_IDLE_TIMEOUT: '2s',
    UPLOAD_REQUEST_TIMEOUT: '3s',
    RATE_LIMIT_PUBLIC: '100000',
    // The dev machine's PostgreSQL is shared by every checkout's tests.
    DATABASE_POOL_SIZE: '4',
    REDIS_PREFIX: `valise-test:${randomBytes(6).toString('hex')}:`,
  });
  // Warm: the routes this file drives have run once, so what follows measures growth, not start-up.
  const warm = await proc.call('POST', '/v1/transfers', {
    key: ws.keys.test,
    body: { files: [{ name: 'warm.bin', size: 1000 }] },
  });
  await put(warm.body.upload_urls[0].url, content(1000));
  rssBefore = rssOf(proc.pid);
});
test.after.always(async () => {
  await proc?.stop();
  await api?.close();
});

/** The resident set of process `pid`, in MiB (VmRSS of /proc/<pid>/status). */
function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

/** What the transfer shows its owner, the recipients and storage: nothing of a file not whole. */
async function nothingVisible(t: import('ava').ExecutionContext, key: string, transferId: string, shortCode: string) {
  const owner = await api.call('GET', `/v1/transfers/${transferId}`, { key });
  t.is(owner.body.status_reason, 'uploading', 'the owner sees the transfer still uploading');
  for (const file of owner.body.files) t.not(file.upload_state, 'uploaded', `${file.name} is not uploaded`);
  const share = await links(api, shortCode);
  t.is(share.status, 403, 'no download link');
  t.is(share.body.error.reason, 'uploading');
  const archive = await api.call('GET', `/v1/transfers/${transferId}/archive`, { key });
  t.is(archive.status, 403, 'no archive');
  t.deepEqual((await storedFor(api, transferId)).objects, [], 'no complete object in storage');
}

/** A raw HTTP/1.1 exchange on a socket of its own: what was answered (if anything) and when it closed. */
async function rawExchange(url: string) {
  const target = new URL(url);
  const socket = net.connect({ host: target.hostname, port: Number(target.port) });
  socket.on('error', () => {}); // a cut connection is one of the outcomes under test
  await once(socket, 'connect');
  let received = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
  });
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  const answer = () => {
    const text = received.toString('utf8');
    const end = text.indexOf('\r\n\r\n');
    const head = end === -1 ? text : text.slice(0, end);
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
    const headers = new Headers();
    for (const line of head.split('\r\n').slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
    const bodyText = end === -1 ? '' : text.slice(end + 4);
    let body: unknown = null;
    try {
      body = JSON.parse(bodyText);
    } catch {}
    return { status, headers, body: body as any, text: bodyText };
  };
  return { socket, target, closed, answer };
}

test.serial(
  `a ${FILES.toLocaleString('en')}-file transfer (TRANSFER_MAX_FILES raised): created with its upload URLs, listed and revoked in bounded time and memory; one more file is refused`,
  async (t) => {
    const files = Array.from({ length: FILES }, (_, i) => ({ name: `f${i}.bin`, size: 1 }));
    const started = Date.now();
    const created = await proc.call('POST', '/v1/transfers', { key: ws.keys.test, body: { files } });
    const createMs = Date.now() - started;
    t.is(created.status, 201, created.text.slice(0, 500));
    t.is(created.body.upload_urls.length, FILES);
    t.is(new Set(created.body.upload_urls.map((u: { url: string }) => u.url)).size, FILES, 'one URL per file');
    t.log(`created in ${createMs} ms, ${(created.text.length / MiB).toFixed(1)} MiB of JSON`);
    t.true(createMs < 20_000, `created in ${createMs} ms`);

    const id = created.body.transfer.id;
    const shown = await proc.call('GET', `/v1/transfers/${id}`, { key: ws.keys.test });
    t.is(shown.status, 200);
    t.is(shown.body.files.length, FILES);
    const listed = await proc.call('GET', '/v1/transfers?limit=5', { key: ws.keys.test });
    t.is(listed.status, 200);
    t.true(listed.body.data.some((tr: { id: string }) => tr.id === id));
    const share = await proc.call('GET', `/v1/shares/${created.body.transfer.short_code}`);
    t.is(share.status, 200);
    t.is(share.body.files.length, FILES);
    // The first and last URLs take their byte; the transfer still waits for the others.
    const first = created.body.upload_urls[0];
    const last = created.body.upload_urls[FILES - 1];
    t.is((await put(first.url, Buffer.from('a'))).status, 200);
    t.is((await put(last.url, Buffer.from('z'))).status, 200);
    const owner = await proc.call('GET', `/v1/transfers/${id}`, { key: ws.keys.test });
    t.is(owner.body.status_reason, 'uploading');
    t.is(owner.body.files.filter((f: { upload_state: string }) => f.upload_state === 'uploaded').length, 2);
    t.is((await proc.call('POST', `/v1/shares/${created.body.transfer.short_code}/download-links`)).status, 403);

    const revoked = await proc.call('DELETE', `/v1/transfers/${id}`, { key: ws.keys.test });
    t.is(revoked.status, 200, revoked.text);
    const refused = await put(first.url, Buffer.from('a'));
    t.is(refused.status, 410);
    t.is(refused.body.error.reason, 'revoked');
    await eventually(async () => ((await storedFor(api, id)).objects.length === 0 ? true : undefined), 30_000);

    const oneMore = await proc.call('POST', '/v1/transfers', {
      key: ws.keys.test,
      body: { files: [...files, { name: 'one-more.bin', size: 1 }] },
    });
    t.is(oneMore.status, 400);
    t.is(envelopeProblem(oneMore), null);
    t.is(oneMore.body.error.code, 'validation_error');
    t.is(oneMore.body.error.param, 'files');
    rssAfterBigTransfer = rssOf(proc.pid);
    t.true(rssAfterBigTransfer - rssBefore < 256, `RSS grew ${(rssAfterBigTransfer - rssBefore).toFixed(0)} MiB`);
  },
);

test.serial(
  'a request head trickled a byte at a time (slow-loris) is answered 408 in the envelope and cut after REQUEST_HEADERS_TIMEOUT; the file is untouched and uploads at once',
  async (t) => {
    const created = await createTransfer(api, ws.keys.test, { files: [{ name: 'loris.bin', size: 1000 }] });
    const url = created.upload_urls[0]?.url.replace(api.url, proc.url) ?? '';
    const exchange = await rawExchange(url);
    t.teardown(() => exchange.socket.destroy());
    const sentAt = Date.now();
    exchange.socket.write(`PUT ${exchange.target.pathname} HTTP/1.1\r\nHost: ${exchange.target.host}\r\nX-Slow: `);
    // One byte every 200 ms: never silent, never done.
    const ticker = setInterval(() => exchange.socket.writable && exchange.socket.write('a'), 200);
    t.teardown(() => clearInterval(ticker));
    const closedAt = await exchange.closed;
    clearInterval(ticker);
    const took = closedAt - sentAt;
    t.true(took >= HEADERS_TIMEOUT_MS - 50, `cut after ${took} ms`);
    // Node checks heads every quarter of the timeout (api/server.ts).
    t.true(took <= HEADERS_TIMEOUT_MS * 1.5 + 1_000, `cut after ${took} ms`);
    const answer = exchange.answer();
    t.is(answer.status, 408, answer.text);
    t.is(envelopeProblem(answer), null);
    t.is(answer.body.error.code, 'validation_error');

    // It held no lease: the file uploads at once.
    const bytes = content(1000);
    const uploaded = await put(url, bytes);
    t.is(uploaded.status, 200, JSON.stringify(uploaded.body));
    t.is(uploaded.body.upload_state, 'uploaded');
  },
);

test.serial(
  'a body cut short of its Content-Length, by PUT or tus PATCH, leaves nothing visible, and its lease is released so the next request resumes at once',
  async (t) => {
    const bytes = content(9 * MiB + 1234);
    const created = await createTransfer(api, ws.keys.test, {
      files: [
        { name: 'cut-put.bin', size: bytes.length },
        { name: 'cut-patch.bin', size: bytes.length },
      ],
    });
    const [viaPut, viaPatch] = created.upload_urls.map((u) => u.url.replace(api.url, proc.url));
    const requests = [
      {
        url: viaPut ?? '',
        head: (target: URL) =>
          `PUT ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${bytes.length}\r\n\r\n`,
      },
      {
        url: viaPatch ?? '',
        head: (target: URL) =>
          `PATCH ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: ${bytes.length}\r\n\r\n`,
      },
    ];
    for (const { url, head } of requests) {
      const exchange = await rawExchange(url);
      exchange.socket.write(head(exchange.target));
      // Less than a part: the client says it sends the whole file, sends 3 MiB, and hangs up.
      await new Promise<void>((resolve) => exchange.socket.write(bytes.subarray(0, 3 * MiB), () => resolve()));
      exchange.socket.destroy();
      await exchange.closed;
    }
    await nothingVisible(t, ws.keys.test, created.transfer.id, created.transfer.short_code);

    // Lease released: HEAD says nothing is in progress and the whole file goes up now, no 409.
    for (const url of [viaPut, viaPatch]) {
      const status = await eventually(async () => {
        const answer = await fetch(url ?? '');
        const body = (await answer.json()) as { upload_in_progress: boolean; upload_offset: number };
        return body.upload_in_progress ? undefined : body;
      }, 5_000);
      t.is(status.upload_offset, 0);
    }
    t.is((await put(viaPut ?? '', bytes)).status, 200);
    const patched = await fetch(viaPatch ?? '', {
      method: 'PATCH',
      headers: {
        'tus-resumable': '1.0.0',
        'upload-offset': '0',
        'content-type': 'application/offset+octet-stream',
      },
      body: bytes,
    });
    t.is(patched.status, 204, await patched.text());
    const owner = await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.test });
    t.deepEqual(
      owner.body.files.map((f: { upload_state: string }) => f.upload_state),
      ['uploaded', 'uploaded'],
    );
  },
);

test.serial(
  'a tus PATCH trickling a byte a second is cut by the upload timeouts; HEAD then reports the stored offset and the upload resumes',
  async (t) => {
    const bytes = content(1000);
    const created = await createTransfer(api, ws.keys.test, { files: [{ name: 'trickle.bin', size: bytes.length }] });
    const url = created.upload_urls[0]?.url.replace(api.url, proc.url) ?? '';
    const exchange = await rawExchange(url);
    t.teardown(() => exchange.socket.destroy());
    const sentAt = Date.now();
    exchange.socket.write(
      `PATCH ${exchange.target.pathname} HTTP/1.1\r\nHost: ${exchange.target.host}\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: ${bytes.length}\r\n\r\n`,
    );
    let sent = 0;
    const ticker = setInterval(() => {
      if (exchange.socket.writable) exchange.socket.write(bytes.subarray(sent, ++sent));
    }, 1_000);
    t.teardown(() => clearInterval(ticker));
    const closedAt = await exchange.closed;
    clearInterval(ticker);
    // UPLOAD_REQUEST_TIMEOUT (3 s): never idle for UPLOAD_IDLE_TIMEOUT (2 s), yet cut.
    t.true(closedAt - sentAt >= 3_000 - 50, `cut after ${closedAt - sentAt} ms, ${sent} bytes`);
    t.true(closedAt - sentAt < 10_000, `cut after ${closedAt - sentAt} ms, ${sent} bytes`);
    await nothingVisible(t, ws.keys.test, created.transfer.id, created.transfer.short_code);

    const head = await fetch(url, { method: 'HEAD', headers: { 'tus-resumable': '1.0.0' } });
    t.is(head.headers.get('upload-offset'), '0');
    const resumed = await fetch(url, {
      method: 'PATCH',
      headers: { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: bytes,
    });
    t.is(resumed.status, 204, await resumed.text());
    t.is(resumed.headers.get('upload-offset'), String(bytes.length));
  },
);

test.serial(
  'a body trickled to a URL that will not store it (file finished, transfer revoked) is still cut by UPLOAD_IDLE_TIMEOUT, by PUT and tus PATCH',
  async (t) => {
    const bytes = content(1000);
    const finished = await createTransfer(api, ws.keys.test, { files: [{ name: 'finished.bin', size: bytes.length }] });
    const revoked = await createTransfer(api, ws.keys.test, { files: [{ name: 'revoked.bin', size: bytes.length }] });
    t.is((await put(finished.upload_urls[0]?.url ?? '', bytes)).status, 200);
    t.is((await api.call('DELETE', `/v1/transfers/${revoked.transfer.id}`, { key: ws.keys.test })).status, 200);
    const declared = 1_000_000;
    const heads = {
      PUT: (target: URL) =>
        `PUT ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${declared}\r\n\r\n`,
      PATCH: (target: URL) =>
        `PATCH ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: ${declared}\r\n\r\n`,
    };
    const runs = [finished, revoked].flatMap((created) =>
      (['PUT', 'PATCH'] as const).map(async (method) => {
        const url = created.upload_urls[0]?.url.replace(api.url, proc.url) ?? '';
        const exchange = await rawExchange(url);
        t.teardown(() => exchange.socket.destroy());
        const sentAt = Date.now();
        exchange.socket.write(heads[method](exchange.target));
        // A byte every 3 s: silent longer than UPLOAD_IDLE_TIMEOUT (2 s) between bytes.
        const ticker = setInterval(() => exchange.socket.writable && exchange.socket.write('x'), 3_000);
        t.teardown(() => clearInterval(ticker));
        const closedAt = await Promise.race([exchange.closed, delay(10_000).then(() => 0)]);
        clearInterval(ticker);
        const label = `${method} to the ${created === finished ? 'finished' : 'revoked'} file`;
        t.true(closedAt > 0, `${label}: the connection is still open after 10 s`);
        t.true(closedAt - sentAt < 2_000 + 1_000, `${label}: closed after ${closedAt - sentAt} ms`);
        // A PUT is answered (200 for the finished file, 410 for the revoked one) before its body is
        // read, and its connection closed; a tus refusal waits for a small body, which never comes.
        if (method === 'PUT') t.is(exchange.answer().status, created === finished ? 200 : 410, label);
      }),
    );
    await Promise.all(runs);
  },
);

test.serial(
  'API memory stays flat under repeated abuse: rounds of cut uploads, trickled heads and trickled refused bodies leave RSS about where the first round left it',
  async (t) => {
    const PER_ROUND = 8;
    const size = 9 * MiB;
    const bytes = content(3 * MiB);
    const live = await createTransfer(api, ws.keys.test, {
      files: Array.from({ length: PER_ROUND }, (_, i) => ({ name: `cut-${i}.bin`, size })),
    });
    const dead = await createTransfer(api, ws.keys.test, { files: [{ name: 'dead.bin', size: 1000 }] });
    await api.call('DELETE', `/v1/transfers/${dead.transfer.id}`, { key: ws.keys.test });
    const onProcess = (url: string) => url.replace(api.url, proc.url);

    /** A PUT declaring 9 MiB that sends 3 MiB and hangs up: a part buffer filled a third, then let go. */
    const cutUpload = async (url: string) => {
      const exchange = await rawExchange(url);
      const { pathname, host } = exchange.target;
      exchange.socket.write(
        `PUT ${pathname} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${size}\r\n\r\n`,
      );
      await new Promise<void>((resolve) => exchange.socket.write(bytes, () => resolve()));
      exchange.socket.destroy();
      await exchange.closed;
    };
    /** Opens a head and trickles it until the server cuts it (REQUEST_HEADERS_TIMEOUT). */
    const trickledHead = async (url: string) => {
      const exchange = await rawExchange(url);
      exchange.socket.write(`PUT ${exchange.target.pathname} HTTP/1.1\r\nHost: ${exchange.target.host}\r\nX-Slow: `);
      const ticker = setInterval(() => exchange.socket.writable && exchange.socket.write('a'), 300);
      await exchange.closed;
      clearInterval(ticker);
    };
    /** A tus PATCH to an ended transfer whose small body never finishes: cut by UPLOAD_IDLE_TIMEOUT. */
    const stalledRefusal = async (url: string) => {
      const exchange = await rawExchange(url);
      const { pathname, host } = exchange.target;
      exchange.socket.write(
        `PATCH ${pathname} HTTP/1.1\r\nHost: ${host}\r\nTus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\nContent-Length: 1000\r\n\r\nxx`,
      );
      await exchange.closed;
    };
    const round = () =>
      Promise.all([
        ...live.upload_urls.map((entry) => cutUpload(onProcess(entry.url))),
        ...live.upload_urls.map((entry) => trickledHead(onProcess(entry.url))),
        ...live.upload_urls.map(() => stalledRefusal(onProcess(dead.upload_urls[0]?.url ?? ''))),
      ]);

    await round();
    const afterFirst = rssOf(proc.pid);
    for (let i = 0; i < 2; i++) await round();
    const afterMore = rssOf(proc.pid);
    t.log(
      `API RSS: ${rssBefore.toFixed(0)} MiB at start, ${rssAfterBigTransfer.toFixed(0)} after the 10,000-file transfer, ` +
        `${afterFirst.toFixed(0)} after a round of ${PER_ROUND * 3} abusive requests, ${afterMore.toFixed(0)} after 2 more rounds`,
    );
    // A round fills 8 part buffers of 8 MiB: were they kept, 2 more rounds would add 128 MiB. Without a
    // collection forced in the API process, RSS still moves by a few tens of MiB either way.
    t.true(afterMore - afterFirst < 64, `2 more rounds grew RSS ${(afterMore - afterFirst).toFixed(0)} MiB`);
    await nothingVisible(t, ws.keys.test, live.transfer.id, live.transfer.short_code);
  },
);

test('files per transfer: TRANSFER_MAX_FILES (100) are accepted, 101 refused with 400 naming files', async (t) => {
  const files = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `n${i}.txt`, size: 1 }));
  const hundred = await api.call('POST', '/v1/transfers', { key: ws.keys.live, body: { files: files(100) } });
  t.is(hundred.status, 201, hundred.text.slice(0, 300));
  t.is(hundred.body.upload_urls.length, 100);
  const more = await api.call('POST', '/v1/transfers', { key: ws.keys.live, body: { files: files(101) } });
  t.is(more.status, 400);
  t.is(envelopeProblem(more), null);
  t.like(more.body.error, { code: 'validation_error', param: 'files' });
  await api.call('DELETE', `/v1/transfers/${hundred.body.transfer.id}`, { key: ws.keys.live });
});

test('hostile names are refused at creation with 400 naming the file: separators, NUL, RTL override, a lone surrogate, 256 UTF-16 units', async (t) => {
  const names = [
    '../x',
    'a/b',
    'a\\b',
    'nul\u0000.txt',
    'invoice\u202Efdp.exe',
    'lone\uD800.txt',
    'x'.repeat(256),
    '\u{1F4E6}'.repeat(128),
  ];
  for (const name of names) {
    const answer = await api.call('POST', '/v1/transfers', {
      key: ws.keys.live,
      body: {
        files: [
          { name: 'fine.txt', size: 1 },
          { name, size: 1 },
        ],
      },
    });
    const what = JSON.stringify(name).slice(0, 40);
    t.is(answer.status, 400, `${what}: ${answer.text}`);
    t.is(envelopeProblem(answer), null, what);
    t.like(answer.body.error, { code: 'validation_error', param: 'files.1.name' }, what);
  }
});

test('4-byte emoji, quotes, markup and 255-unit names are stored as sent, and reach downloads, the share page and the archive safely', async (t) => {
  const names = [
    '\u{1F4E6} report \u{1F512}.pdf',
    'quote"; filename="evil.exe',
    '<img src=x onerror=alert(1)>.html',
    `${'\u{1F600}'.repeat(125)}.txt`, // 255 UTF-16 units, 505 UTF-8 bytes
    `${'l'.repeat(251)}.txt`,
    'עברית ملف.txt',
  ];
  const bytes = names.map((_, i) => content(100 + i));
  const created = await createTransfer(api, ws.keys.live, {
    transfer_title: 'Names "q" <b>',
    files: names.map((name, i) => ({ name, size: bytes[i]?.length })),
  });
  t.deepEqual(
    created.upload_urls.map((u) => u.name),
    names,
  );
  for (const [i, entry] of created.upload_urls.entries()) t.is((await put(entry.url, bytes[i] as Buffer)).status, 200);
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  const owner = await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live });
  t.deepEqual(
    owner.body.files.map((f: { name: string }) => f.name),
    names,
  );

  const issued = await links(api, created.transfer.short_code);
  for (const [i, file] of issued.body.files.entries()) {
    const download = await fetchBytes(file.download_url);
    t.true(download.bytes.equals(bytes[i] as Buffer));
    checkDisposition(t, download.headers.get('content-disposition') ?? '', names[i] ?? '');
  }

  const page = await fetch(`${api.url}/t/${created.transfer.short_code}`);
  const html = await page.text();
  t.is(page.status, 200);
  t.false(html.includes('<img src=x'), 'markup in a name is shown as text');
  t.true(html.includes('&lt;img src=x onerror=alert(1)&gt;.html'));
  t.false(html.includes('<b>'), 'markup in a title is shown as text');

  const archive = await zipOf(t, `${api.url}/v1/transfers/${created.transfer.id}/archive`, ws.keys.live);
  t.deepEqual(Object.keys(archive.entries).sort(), names.map((name) => safeName(name)).sort());
});

test('names stored before the rules (separators, CR LF, an RTL override) still download with a safe Content-Disposition and archive entry', async (t) => {
  const legacy = ['../../etc/passwd', 'a\r\nSet-Cookie: stolen=1', 'invoice\u202Efdp.exe', 'C:\\Windows\\evil.dll'];
  const bytes = legacy.map((_, i) => content(200 + i));
  const created = await createTransfer(api, ws.keys.live, {
    files: legacy.map((_, i) => ({ name: `legacy-${i}.bin`, size: bytes[i]?.length })),
  });
  for (const [i, entry] of created.upload_urls.entries()) t.is((await put(entry.url, bytes[i] as Buffer)).status, 200);
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  for (const [i, entry] of created.upload_urls.entries()) {
    await api.services.db.query(
      sql.unsafe`UPDATE transfer_files SET name = ${legacy[i] ?? ''} WHERE id = ${entry.file_id}`,
    );
  }

  const issued = await links(api, created.transfer.short_code);
  t.is(issued.status, 200, issued.text);
  for (const [i, file] of issued.body.files.entries()) {
    const download = await fetchBytes(file.download_url);
    t.is(download.status, 200);
    t.is(download.headers.get('set-cookie'), null, 'no header injected');
    checkDisposition(t, download.headers.get('content-disposition') ?? '', legacy[i] ?? '');
  }
  const archive = await zipOf(t, `${api.url}/v1/transfers/${created.transfer.id}/archive`, ws.keys.live);
  const entries = Object.keys(archive.entries);
  t.is(entries.length, legacy.length);
  for (const entry of entries) {
    t.false(entry.startsWith('/') || entry.split('/').includes('..'), `${JSON.stringify(entry)} stays inside`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for
    t.false(/[\u0000-\u001f\u202e\\:]/.test(entry), `${JSON.stringify(entry)} holds nothing unsafe`);
  }
});

/** An attachment whose ASCII fallback holds no quote, backslash or control, and whose RFC 8187 name is `name`. */
function checkDisposition(t: import('ava').ExecutionContext, header: string, name: string) {
  const match = /^attachment; filename="([\x20-\x7e]*)"; filename\*=UTF-8''([A-Za-z0-9%!._~-]+)$/.exec(header);
  t.truthy(match, `Content-Disposition ${JSON.stringify(header)}`);
  if (!match) return;
  t.false(/["\\]/.test(match[1] ?? ''), 'no quote or backslash in the fallback');
  t.is(decodeURIComponent(match[2] ?? ''), name, 'filename* decodes to the name');
}

/** The archive at `url`, read by unzip and Python's zipfile. */
async function zipOf(t: import('ava').ExecutionContext, url: string, key: string) {
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  t.is(response.status, 200);
  const path = join(tmpdir(), `valise-abuse-${randomBytes(6).toString('hex')}.zip`);
  writeFileSync(path, Buffer.from(await response.arrayBuffer()));
  t.teardown(() => rmSync(path, { force: true }));
  const checked = await checkZip(path);
  t.true(checked.unzipOk, checked.unzipOutput);
  t.is(checked.bad, null);
  return checked;
}

test('a URL reused after its file completed: PUT, chunk and tus PATCH change nothing, and the file downloads as first sent', async (t) => {
  const bytes = content(5000);
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'done.bin', size: bytes.length }] });
  const url = created.upload_urls[0]?.url ?? '';
  t.is((await put(url, bytes)).status, 200);
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  const other = content(5000);

  const again = await put(url, other);
  t.is(again.status, 200);
  t.is(again.body.upload_state, 'uploaded');
  const chunk = await put(url, other, { 'content-range': `bytes 0-${other.length - 1}/${other.length}` });
  t.true([200, 409].includes(chunk.status), `chunk: ${chunk.status}`);
  if (chunk.status !== 200) t.is(envelopeProblem({ ...chunk, text: '' }), null);
  const patch = await fetch(url, {
    method: 'PATCH',
    headers: { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: other,
  });
  t.log(`tus PATCH on a finished file: ${patch.status} ${await patch.text()}`);
  t.true(patch.status === 204 || patch.status === 409, `PATCH: ${patch.status}`);

  const issued = await links(api, created.transfer.short_code);
  const download = await fetchBytes(issued.body.files[0].download_url);
  t.true(download.bytes.equals(bytes), 'the first bytes, not the reuse');
  const owner = await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key: ws.keys.live });
  t.is(owner.body.status, 'active');
});

test("expired URLs and another file's or workspace's token are refused on tus too, in the envelope, storing nothing", async (t) => {
  const other = await api.workspace('Upload abuse: someone else');
  const mine = await createTransfer(api, ws.keys.live, { files: [{ name: 'mine.bin', size: 1000 }] });
  const theirs = await createTransfer(api, other.keys.live, { files: [{ name: 'theirs.bin', size: 1000 }] });
  const fileId = mine.upload_urls[0]?.file_id ?? '';
  const sign = (data: Record<string, string>, expiresAt: Date) =>
    signToken(api.services.keys.links, 'upload', data, expiresAt);
  const cases: Array<[string, string, number]> = [
    ['expired a second ago', sign({ f: fileId, t: mine.transfer.id }, new Date(Date.now() - 1000)), 410],
    [
      "my file under the other workspace's transfer",
      sign({ f: fileId, t: theirs.transfer.id }, new Date(Date.now() + 3_600_000)),
      404,
    ],
    [
      "the other workspace's file under my transfer",
      sign({ f: theirs.upload_urls[0]?.file_id ?? '', t: mine.transfer.id }, new Date(Date.now() + 3_600_000)),
      404,
    ],
  ];
  const body = content(1000);
  for (const [label, token, status] of cases) {
    const url = `${api.url}/v1/uploads/${token}`;
    const requests: Array<[string, RequestInit]> = [
      [
        'PATCH',
        {
          method: 'PATCH',
          headers: {
            'tus-resumable': '1.0.0',
            'upload-offset': '0',
            'content-type': 'application/offset+octet-stream',
          },
          body,
        },
      ],
      ['POST', { method: 'POST', headers: { 'tus-resumable': '1.0.0', 'upload-length': '1000' } }],
      ['DELETE', { method: 'DELETE', headers: { 'tus-resumable': '1.0.0' } }],
    ];
    for (const [method, init] of requests) {
      const response = await fetch(url, init);
      const text = await response.text();
      const answer = { status: response.status, headers: response.headers, body: JSON.parse(text), text };
      t.is(answer.status, status, `${method} ${label}: ${text}`);
      t.is(envelopeProblem(answer), null, `${method} ${label}`);
    }
  }
  for (const [created, key] of [
    [mine, ws.keys.live],
    [theirs, other.keys.live],
  ] as const) {
    t.deepEqual(await storedFor(api, created.transfer.id), { objects: [], uploads: [] });
    const files = await createTransferQueries(api.services.db).files(created.transfer.id);
    t.deepEqual(
      files.map((f) => [f.upload_state, f.bytes_received]),
      [['pending', 0]],
    );
    t.is((await api.call('GET', `/v1/transfers/${created.transfer.id}`, { key })).body.status_reason, 'uploading');
  }
});
