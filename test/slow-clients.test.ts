import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { PART_PLAINTEXT } from '../lib/uploads/parts.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { content, createTransfer, links, put, waitForTransfer } from './helpers/transfers.ts';

// Slow-loris clients: uploads that send a few bytes and then nothing, downloads
// that read nothing, many at once from one address and one link. They must be
// closed after the idle timeout, bounded per address and per link, and never
// take the object store's sockets from other users' transfers.
//
// Every test starts its own API with short timeouts; the connections stall on
// raw sockets, and the API's own listener says when it closed each of them.
// Clients bind to addresses of 127.0.0.0/8 (loopback) to be told apart by IP.

const MiB = 1024 * 1024;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

let base: TestApi;
let attacker: TestWorkspace;
let other: TestWorkspace;
/** A transfer whose file is larger than every socket buffer between MinIO and a paused client. */
let big: { shortCode: string; bytes: Buffer };
/** Another user's small active transfer. */
let small: { shortCode: string; bytes: Buffer };

test.before(async () => {
  base = await startApi();
  attacker = await base.workspace('Slow clients: attacker');
  other = await base.workspace('Slow clients: someone else');
  const bigBytes = randomBytes(64 * MiB);
  const bigTransfer = await createTransfer(base, attacker.keys.test, {
    encryption_mode: 'e2e',
    files: [{ name: 'big.val', size: bigBytes.length }],
  });
  const smallBytes = content(2 * MiB + 17);
  const smallTransfer = await createTransfer(base, other.keys.test, {
    files: [{ name: 'small.bin', size: smallBytes.length }],
  });
  for (const [entry, bytes] of [
    [bigTransfer.upload_urls[0], bigBytes],
    [smallTransfer.upload_urls[0], smallBytes],
  ] as const) {
    const answer = await put(entry?.url ?? '', bytes);
    if (answer.status !== 200) throw new Error(`fixture upload failed: ${answer.status}`);
  }
  await waitForTransfer(base, attacker.keys.test, bigTransfer.transfer.id, (tr) => tr.status === 'active');
  await waitForTransfer(base, other.keys.test, smallTransfer.transfer.id, (tr) => tr.status === 'active');
  big = { shortCode: bigTransfer.transfer.short_code, bytes: bigBytes };
  small = { shortCode: smallTransfer.transfer.short_code, bytes: smallBytes };
});
test.after.always(() => base?.close());

async function apiWith(t: ExecutionContext, env: Record<string, string>) {
  const api = await startApi({ RATE_LIMIT_PUBLIC: '100000', ...env });
  const connections = trackConnections(api);
  t.teardown(() => api.close());
  return { api, connections };
}

/** When the API closed each connection, seen from its own listener, by client address and port. */
function trackConnections(api: TestApi) {
  const closedAt = new Map<string, number>();
  const open = new Set<string>();
  api.server.listener.on('connection', (socket: net.Socket) => {
    const key = `${socket.remoteAddress}:${socket.remotePort}`;
    open.add(key);
    socket.once('close', () => {
      open.delete(key);
      closedAt.set(key, Date.now());
    });
  });
  return {
    isOpen: (key: string) => open.has(key),
    closed: (key: string, timeoutMs: number) => eventually(async () => closedAt.get(key), timeoutMs, 25),
  };
}

async function downloadUrl(api: TestApi, shortCode: string): Promise<string> {
  const answer = await links(api, shortCode);
  if (answer.status !== 200) throw new Error(`download-links: ${answer.status} ${answer.text}`);
  return answer.body.files[0].download_url;
}

async function connectFrom(url: URL, localAddress: string) {
  const socket = net.connect({ host: url.hostname, port: Number(url.port), localAddress });
  socket.on('error', () => {}); // the API may reset a stalled connection: that is the point
  await once(socket, 'connect');
  return { socket, key: `${socket.localAddress}:${socket.localPort}` };
}

type StalledDownload = {
  key: string;
  socket: net.Socket;
  /** 0 when no response head came within the wait. */
  status: number;
  head: string;
  body: string;
  /** When the request was sent, and when the client stopped reading. */
  sentAt: number;
  stalledAt: number;
};

/** GET a download URL, read the response head, then read nothing more (the socket is paused). */
async function stalledDownload(
  t: ExecutionContext,
  url: string,
  from = '127.0.0.1',
  headWithinMs = 15_000,
  headers: Record<string, string> = {},
) {
  const target = new URL(url);
  const { socket, key } = await connectFrom(target, from);
  t.teardown(() => socket.destroy());
  const sentAt = Date.now();
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.write(`GET ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\n${extra.join('')}\r\n`);
  let received = Buffer.alloc(0);
  return new Promise<StalledDownload>((resolve) => {
    const done = (status: number, head: string, body: string) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.pause();
      resolve({ key, socket, status, head, body, sentAt, stalledAt: Date.now() });
    };
    const timer = setTimeout(() => done(0, '', ''), headWithinMs);
    function onData(chunk: Buffer) {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = received.subarray(0, end).toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      if (status >= 200 && status < 300) return done(status, head, '');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (received.length < end + 4 + length) return;
      done(status, head, received.subarray(end + 4, end + 4 + length).toString('utf8'));
    }
    socket.on('data', onData);
  });
}

/**
 * PUT to an upload URL declaring `size` bytes, send `sent`, then send nothing more (still reading).
 * `answer` is the response, if one comes before the connection closes: a refusal, or the end.
 */
async function stalledUpload(
  t: ExecutionContext,
  url: string,
  size: number,
  sent: Buffer,
  from = '127.0.0.1',
  headers: Record<string, string> = {},
) {
  const target = new URL(url);
  const { socket, key } = await connectFrom(target, from);
  t.teardown(() => socket.destroy());
  // Not events.once: a refused upload's socket may also see EPIPE, which would reject it.
  const clientClosed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  let received = Buffer.alloc(0);
  const answer = new Promise<{ status: number; head: string; body: string }>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = received.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (received.length < end + 4 + length) return;
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, head, body: received.subarray(end + 4, end + 4 + length).toString('utf8') });
    });
    socket.once('close', () => resolve({ status: 0, head: '', body: '' }));
  });
  const sentAt = Date.now();
  socket.write(
    `PUT ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${size}\r\n${Object.entries(
      headers,
    )
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('')}\r\n`,
  );
  // A refused upload may be answered (and closed) before its bytes are all taken.
  await Promise.race([new Promise<void>((resolve) => socket.write(sent, () => resolve())), answer]);
  return { key, socket, sentAt, stalledAt: Date.now(), clientClosed, answer };
}

/** A GET from a chosen loopback address, body read in full. */
function getFrom(
  url: string,
  localAddress: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { localAddress, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.setTimeout(30_000, () => request.destroy(new Error(`no progress on ${url} for 30 s`)));
  });
}

/** `work`, or a failure naming what did not finish in time. */
async function within<T>(ms: number, what: string, work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return { value: await Promise.race([work, deadline]), ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

/** Another user sends a fresh 9 MiB file (two parts) and downloads their existing one, from another address. */
async function otherUsersTransfer(api: TestApi) {
  const bytes = content(9 * MiB + 5);
  const created = await createTransfer(api, other.keys.test, { files: [{ name: 'fresh.bin', size: bytes.length }] });
  const upload = await within(20_000, "the other user's upload", put(created.upload_urls[0]?.url ?? '', bytes));
  const url = await downloadUrl(api, small.shortCode);
  const download = await within(20_000, "the other user's download", getFrom(url, '127.0.0.2'));
  return { upload, download };
}

const errorOf = (body: string) => JSON.parse(body).error as { code: string; reason?: string };

test.serial(
  'an upload whose client stops sending is closed after UPLOAD_IDLE_TIMEOUT and resumes from its stored part',
  async (t) => {
    const { api, connections } = await apiWith(t, { UPLOAD_IDLE_TIMEOUT: '2s' });
    const bytes = content(PART_PLAINTEXT + 1000);
    const created = await createTransfer(api, other.keys.test, { files: [{ name: 'stalls.bin', size: bytes.length }] });
    const url = created.upload_urls[0]?.url ?? '';

    // One whole part and a few bytes of the next, then silence.
    const stall = await stalledUpload(t, url, bytes.length, bytes.subarray(0, PART_PLAINTEXT + 10));
    const closedAt = await connections.closed(stall.key, 20_000);
    t.true(
      closedAt - stall.stalledAt >= 2_000 - 20,
      `closed ${closedAt - stall.stalledAt} ms after the client fell silent`,
    );
    await within(5_000, 'the client seeing its connection closed', stall.clientClosed);

    // The lease is released and the stored part kept: the same URL resumes where it stopped.
    const head = await fetch(url, { method: 'HEAD' });
    t.is(head.headers.get('upload-offset'), String(PART_PLAINTEXT));
    const rest = await put(url, bytes.subarray(PART_PLAINTEXT), {
      'content-range': `bytes ${PART_PLAINTEXT}-${bytes.length - 1}/${bytes.length}`,
    });
    t.is(rest.status, 200, JSON.stringify(rest.body));
    t.is(rest.body.upload_state, 'uploaded');
    await waitForTransfer(api, other.keys.test, created.transfer.id, (tr) => tr.status === 'active');
    const received = await getFrom(await downloadUrl(api, created.transfer.short_code), '127.0.0.1');
    t.is(sha256(received.body), sha256(bytes));
  },
);

test.serial(
  'a download whose client reads nothing is closed after DOWNLOAD_IDLE_TIMEOUT and its S3 stream released',
  async (t) => {
    const { api, connections } = await apiWith(t, { DOWNLOAD_IDLE_TIMEOUT: '2s' });
    const url = await downloadUrl(api, big.shortCode);
    const stall = await stalledDownload(t, url);
    t.is(stall.status, 200);
    // Kernel buffers keep taking bytes for a moment after the client pauses, so the server's
    // idle clock starts a little after the client's: closed at least the idle timeout later.
    const closedAt = await connections.closed(stall.key, 45_000);
    t.true(
      closedAt - stall.stalledAt >= 2_000 - 20,
      `closed ${closedAt - stall.stalledAt} ms after the client stopped reading`,
    );
    await eventually(
      async () => (api.services.downloads.objects.sockets().active === 0 ? true : undefined),
      10_000,
      25,
    );
    t.is(api.services.downloads.gate.active(), 0);

    // The same link from the same address downloads in full afterwards.
    const again = await getFrom(url, '127.0.0.1');
    t.is(again.status, 200);
    t.is(sha256(again.body), sha256(big.bytes));
  },
);

test.serial(
  'concurrent downloads are bounded per client address: past DOWNLOADS_PER_IP, 429 rate_limited with Retry-After',
  async (t) => {
    const { api } = await apiWith(t, { DOWNLOADS_PER_IP: '3', DOWNLOADS_PER_TRANSFER: '100' });
    // A link streams one request at a time (docs/transfers.md, "Download links"): each download here has its own.
    const url = () => downloadUrl(api, big.shortCode);
    const admitted = await Promise.all([1, 2, 3].map(async () => stalledDownload(t, await url(), '127.0.0.21')));
    t.deepEqual(
      admitted.map((d) => d.status),
      [200, 200, 200],
    );
    const refused = await stalledDownload(t, await url(), '127.0.0.21');
    t.is(refused.status, 429);
    t.regex(refused.head, /\r\nretry-after: \d+/i);
    t.deepEqual(errorOf(refused.body), { ...errorOf(refused.body), code: 'rate_limited', reason: 'downloads_per_ip' });

    // Another address is not affected; and a slot is given back as soon as a download ends.
    t.is((await stalledDownload(t, await url(), '127.0.0.22')).status, 200);
    admitted[0]?.socket.destroy();
    await eventually(
      async () => {
        const retry = await stalledDownload(t, await url(), '127.0.0.21');
        retry.socket.destroy();
        return retry.status === 200 ? true : undefined;
      },
      10_000,
      50,
    );
    t.pass();
  },
);

test.serial(
  'concurrent downloads are bounded per link: past DOWNLOADS_PER_TRANSFER, 429; other transfers still download',
  async (t) => {
    const { api } = await apiWith(t, { DOWNLOADS_PER_IP: '100', DOWNLOADS_PER_TRANSFER: '3' });
    // A link streams one request at a time (docs/transfers.md, "Download links"): each download here has its own.
    const url = () => downloadUrl(api, big.shortCode);
    const admitted = await Promise.all(
      ['127.0.0.31', '127.0.0.32', '127.0.0.33'].map(async (ip) => stalledDownload(t, await url(), ip)),
    );
    t.deepEqual(
      admitted.map((d) => d.status),
      [200, 200, 200],
    );
    const refused = await stalledDownload(t, await url(), '127.0.0.34');
    t.is(refused.status, 429);
    t.regex(refused.head, /\r\nretry-after: \d+/i);
    t.deepEqual(errorOf(refused.body), {
      ...errorOf(refused.body),
      code: 'rate_limited',
      reason: 'downloads_per_transfer',
    });

    const elsewhere = await getFrom(await downloadUrl(api, small.shortCode), '127.0.0.34');
    t.is(elsewhere.status, 200);
    t.is(sha256(elsewhere.body), sha256(small.bytes));
  },
);

const FLOOD = 60; // more than the 50 sockets of an S3 client with the SDK's defaults

test.serial(
  `${FLOOD} stalled downloads and 10 stalled uploads from one address and one transfer: another user's upload and download complete meanwhile; the stalls are closed after the idle timeout`,
  async (t) => {
    const idleMs = 15_000;
    // Every stalled upload is let in (UPLOADS_PER_IP is 8 by default): this is about their idle
    // timeout. The attacker is 127.0.0.3; the other user uploads from 127.0.0.1.
    const attackerAddress = '127.0.0.3';
    const { api, connections } = await apiWith(t, {
      DOWNLOAD_IDLE_TIMEOUT: '15s',
      UPLOAD_IDLE_TIMEOUT: '15s',
      UPLOADS_PER_IP: '10',
    });
    // A link streams one request at a time (docs/transfers.md, "Download links"): each download here has its own.
    const url = () => downloadUrl(api, big.shortCode);
    const uploads = await createTransfer(api, attacker.keys.test, {
      files: Array.from({ length: 10 }, (_, i) => ({ name: `stall-${i}.bin`, size: 3 * MiB })),
    });

    const downloads = await Promise.all(
      Array.from({ length: FLOOD }, async () => stalledDownload(t, await url(), attackerAddress, 10_000)),
    );
    const stalledUploads = await Promise.all(
      uploads.upload_urls.map((entry) => stalledUpload(t, entry.url, entry.size, randomBytes(100), attackerAddress)),
    );

    const { upload, download } = await otherUsersTransfer(api);
    t.log(`other user's 9 MiB upload: ${upload.ms} ms, 2 MiB download: ${download.ms} ms, with ${FLOOD} + 10 stalls`);
    t.is(upload.value.status, 200, JSON.stringify(upload.value.body));
    t.is(download.value.status, 200);
    t.is(sha256(download.value.body), sha256(small.bytes));

    const admitted = downloads.filter((d) => d.status === 200);
    const refused = downloads.filter((d) => d.status === 429);
    t.log(`downloads: ${admitted.length} admitted, ${refused.length} refused with 429`);
    t.is(admitted.length, api.services.config.transfers.downloads.perIp);
    t.is(refused.length, FLOOD - admitted.length);
    for (const d of refused) t.is(errorOf(d.body).code, 'rate_limited');
    // The other user's transfer went through while every admitted stall was still held open.
    for (const stall of [...admitted, ...stalledUploads]) t.true(connections.isOpen(stall.key), 'still open');

    const delays: number[] = [];
    for (const stall of [...admitted, ...stalledUploads]) {
      const closedAt = await connections.closed(stall.key, idleMs + 45_000);
      delays.push(closedAt - stall.stalledAt);
      t.true(closedAt - stall.stalledAt >= idleMs - 20, `closed ${closedAt - stall.stalledAt} ms after stalling`);
    }
    t.log(`stalls closed ${Math.min(...delays)} to ${Math.max(...delays)} ms after they fell silent`);
    await eventually(
      async () => (api.services.downloads.objects.sockets().active === 0 ? true : undefined),
      10_000,
      25,
    );
    t.is(api.services.downloads.gate.active(), 0);
    const again = await getFrom(await url(), '127.0.0.1');
    t.is(sha256(again.body), sha256(big.bytes));
  },
);

test.serial(
  `public downloads cannot take the object store's sockets from uploads: past DOWNLOADS_MAX at once, 429`,
  async (t) => {
    const { api } = await apiWith(t, {
      DOWNLOAD_IDLE_TIMEOUT: '15s',
      DOWNLOADS_PER_IP: '1000',
      DOWNLOADS_PER_TRANSFER: '1000',
      DOWNLOADS_MAX: '8',
    });
    // A link streams one request at a time (docs/transfers.md, "Download links"): each download here has its own.
    const url = () => downloadUrl(api, big.shortCode);
    const downloads = await Promise.all(
      Array.from({ length: FLOOD }, async () => stalledDownload(t, await url(), '127.0.0.1', 10_000)),
    );

    const bytes = content(9 * MiB + 5);
    const created = await createTransfer(api, other.keys.test, { files: [{ name: 'fresh.bin', size: bytes.length }] });
    const upload = await within(20_000, "the other user's upload", put(created.upload_urls[0]?.url ?? '', bytes));
    t.log(`other user's 9 MiB upload: ${upload.ms} ms, with ${FLOOD} stalled downloads`);
    t.is(upload.value.status, 200, JSON.stringify(upload.value.body));

    const admitted = downloads.filter((d) => d.status === 200);
    const refused = downloads.filter((d) => d.status === 429);
    t.is(admitted.length, 8);
    t.is(refused.length, FLOOD - 8);
    t.is(errorOf(refused[0]?.body ?? '{}').reason, 'downloads_busy');
    t.true(api.services.downloads.objects.sockets().active <= 8);
  },
);

test.serial(
  'UPLOAD_REQUEST_TIMEOUT and DOWNLOAD_REQUEST_TIMEOUT end requests that trickle without ever going idle',
  async (t) => {
    const { api, connections } = await apiWith(t, {
      UPLOAD_IDLE_TIMEOUT: '2s',
      UPLOAD_REQUEST_TIMEOUT: '3s',
      DOWNLOAD_IDLE_TIMEOUT: '2s',
      DOWNLOAD_REQUEST_TIMEOUT: '3s',
    });
    const created = await createTransfer(api, other.keys.test, { files: [{ name: 'trickle.bin', size: MiB }] });
    const upload = await stalledUpload(t, created.upload_urls[0]?.url ?? '', MiB, Buffer.from('x'));
    const download = await stalledDownload(t, await downloadUrl(api, big.shortCode));
    t.is(download.status, 200);

    // A byte up, and whatever arrived read down, every 400 ms: never idle for 2 s.
    let sent = 1;
    let read = 0;
    download.socket.on('data', (chunk: Buffer) => {
      read += chunk.length;
      download.socket.pause();
    });
    const ticker = setInterval(() => {
      if (!upload.socket.destroyed && sent < 100) upload.socket.write('x', () => sent++);
      if (!download.socket.destroyed) download.socket.resume();
    }, 400);
    t.teardown(() => clearInterval(ticker));

    const uploadClosed = await connections.closed(upload.key, 20_000);
    const downloadClosed = await connections.closed(download.key, 20_000);
    clearInterval(ticker);
    t.true(
      uploadClosed - upload.sentAt >= 3_000 - 20,
      `upload closed ${uploadClosed - upload.sentAt} ms after it began`,
    );
    t.true(
      downloadClosed - download.sentAt >= 3_000 - 20,
      `download closed ${downloadClosed - download.sentAt} ms after it began`,
    );
    t.true(sent >= 6, `${sent} bytes trickled up`);
    t.true(read > 0, `${read} bytes trickled down`);
  },
);

/** The answer of an upload within `ms`, or status 0 while it is still being received. */
async function answerWithin(upload: { answer: Promise<{ status: number; head: string; body: string }> }, ms: number) {
  const pending = new Promise<{ status: number; head: string; body: string }>((resolve) =>
    setTimeout(() => resolve({ status: 0, head: '', body: '' }), ms).unref(),
  );
  return Promise.race([upload.answer, pending]);
}

/** Part buffers live outside the JS heap: ArrayBuffer bytes and the process's resident set, in MiB. */
function memory() {
  const { arrayBuffers, rss } = process.memoryUsage();
  return { arrayBuffers: arrayBuffers / MiB, rss: rss / MiB };
}

test.serial(
  'uploads are bounded per address and per holder of upload URLs: past them 429 with Retry-After, and the refused ones hold no part buffer',
  async (t) => {
    const perIp = 4;
    const { api } = await apiWith(t, {
      UPLOADS_PER_IP: String(perIp),
      UPLOADS_PER_KEY: '6',
      UPLOAD_IDLE_TIMEOUT: '60s',
    });
    const size = PART_PLAINTEXT + 1000;
    const created = await createTransfer(api, attacker.keys.test, {
      files: Array.from({ length: 12 }, (_, i) => ({ name: `held-${i}.bin`, size })),
    });
    const urls = created.upload_urls.map((entry) => entry.url);
    // Each stalls one byte short of its first part: a whole part buffer held. The clients, in this
    // process too, all send the same bytes, so that what grows is the server's buffers.
    const partBytes = randomBytes(PART_PLAINTEXT - 1);
    const almostAPart = () => partBytes;
    const before = memory();

    const admitted = [];
    for (const url of urls.slice(0, perIp))
      admitted.push(await stalledUpload(t, url, size, almostAPart(), '127.0.0.51'));
    for (const upload of admitted) t.is((await answerWithin(upload, 500)).status, 0, 'still being received');
    const held = memory();

    const refused = [];
    for (const url of urls.slice(perIp, 2 * perIp)) {
      refused.push(await stalledUpload(t, url, size, almostAPart(), '127.0.0.51'));
    }
    const answers = await Promise.all(refused.map((upload) => answerWithin(upload, 10_000)));
    const after = memory();
    t.log(
      `arrayBuffers ${before.arrayBuffers.toFixed(1)} MiB, with ${perIp} stalled uploads ${held.arrayBuffers.toFixed(1)} MiB, ` +
        `after ${refused.length} more refused ${after.arrayBuffers.toFixed(1)} MiB; ` +
        `rss ${before.rss.toFixed(0)} / ${held.rss.toFixed(0)} / ${after.rss.toFixed(0)} MiB`,
    );
    for (const answer of answers) {
      t.is(answer.status, 429, answer.head);
      t.regex(answer.head, /\r\nretry-after: \d+/i);
      t.deepEqual(errorOf(answer.body), { ...errorOf(answer.body), code: 'rate_limited', reason: 'uploads_per_ip' });
    }
    t.is(api.services.uploads.active(), perIp);
    // The refused uploads took no part buffer: ArrayBuffer memory grew by less than one part.
    t.true(
      after.arrayBuffers - held.arrayBuffers < PART_PLAINTEXT / MiB,
      `${(after.arrayBuffers - held.arrayBuffers).toFixed(1)} MiB more after the refusals`,
    );

    // Another address gets the transfer's other slots, up to UPLOADS_PER_KEY (6) for the transfer.
    const elsewhere = [];
    for (const url of urls.slice(2 * perIp, 2 * perIp + 2)) {
      elsewhere.push(await stalledUpload(t, url, size, Buffer.from('x'), '127.0.0.52'));
    }
    for (const upload of elsewhere) t.is((await answerWithin(upload, 500)).status, 0);
    const perKey = await answerWithin(
      await stalledUpload(t, urls[2 * perIp + 2] ?? '', size, Buffer.from('x'), '127.0.0.52'),
      10_000,
    );
    t.is(perKey.status, 429);
    t.is(errorOf(perKey.body).reason, 'uploads_per_key');

    // Another user's transfer is not held up; and a slot is given back as soon as an upload ends.
    const bytes = content(MiB);
    const mine = await createTransfer(api, other.keys.test, { files: [{ name: 'mine.bin', size: bytes.length }] });
    t.is((await put(mine.upload_urls[0]?.url ?? '', bytes)).status, 200);
    admitted[0]?.socket.destroy();
    await eventually(async () => (api.services.uploads.active() === 5 ? true : undefined), 10_000, 25);
    const resumed = await put(urls[0] ?? '', content(size));
    t.is(resumed.status, 200, JSON.stringify(resumed.body));
  },
);

test.serial(
  "an owner's archive takes a download slot: past DOWNLOADS_MAX, owners' archives and public downloads get 429, not a starved storage pool",
  async (t) => {
    const { api } = await apiWith(t, { DOWNLOADS_PER_IP: '100', DOWNLOADS_PER_TRANSFER: '100', DOWNLOADS_MAX: '2' });
    // Server mode (an archive decrypts), and larger than every buffer between MinIO and a paused client.
    const bytes = content(64 * MiB);
    const created = await createTransfer(api, attacker.keys.test, {
      files: [{ name: 'large.bin', size: bytes.length }],
    });
    t.is((await put(created.upload_urls[0]?.url ?? '', bytes)).status, 200);
    await waitForTransfer(api, attacker.keys.test, created.transfer.id, (tr) => tr.status === 'active', 60_000);
    const archiveUrl = `${api.url}/v1/transfers/${created.transfer.id}/archive`;
    const owner = { Authorization: `Bearer ${attacker.keys.test}` };

    const held = await Promise.all(
      ['127.0.0.61', '127.0.0.62'].map((ip) => stalledDownload(t, archiveUrl, ip, 15_000, owner)),
    );
    t.deepEqual(
      held.map((d) => d.status),
      [200, 200],
    );
    const third = await stalledDownload(t, archiveUrl, '127.0.0.63', 15_000, owner);
    t.is(third.status, 429, third.head);
    t.regex(third.head, /\r\nretry-after: \d+/i);
    t.is(errorOf(third.body).reason, 'downloads_busy');
    const publicDownload = await stalledDownload(t, await downloadUrl(api, small.shortCode), '127.0.0.64');
    t.is(publicDownload.status, 429);
    t.is(errorOf(publicDownload.body).reason, 'downloads_busy');

    for (const archive of held) archive.socket.destroy();
    await eventually(async () => (api.services.downloads.gate.active() === 0 ? true : undefined), 10_000, 25);
    const received = await getFrom(await downloadUrl(api, small.shortCode), '127.0.0.64');
    t.is(sha256(received.body), sha256(small.bytes));
  },
);

test.serial(
  'a download that reads steadily but slower than DOWNLOAD_MIN_RATE is closed after a rate window, and its slot given back',
  async (t) => {
    const { api, connections } = await apiWith(t, {
      DOWNLOAD_IDLE_TIMEOUT: '60s',
      DOWNLOAD_MIN_RATE: String(MiB),
      DOWNLOAD_RATE_WINDOW: '2s',
    });
    const download = await stalledDownload(t, await downloadUrl(api, big.shortCode), '127.0.0.71');
    t.is(download.status, 200);
    t.is(api.services.downloads.gate.active(), 1);
    // A little read every 250 ms: never idle, far below 1 MiB/s once the buffers are full.
    let read = 0;
    download.socket.on('data', (chunk: Buffer) => {
      read += chunk.length;
      download.socket.pause();
    });
    const ticker = setInterval(() => download.socket.resume(), 250);
    t.teardown(() => clearInterval(ticker));
    const closedAt = await connections.closed(download.key, 30_000);
    clearInterval(ticker);
    t.log(`closed ${closedAt - download.sentAt} ms after it began, ${read} bytes read`);
    t.true(read < big.bytes.length, 'cut off before the end');
    await eventually(async () => (api.services.downloads.gate.active() === 0 ? true : undefined), 10_000, 25);

    // A client that reads at full speed is not affected.
    const whole = await getFrom(await downloadUrl(api, big.shortCode), '127.0.0.71');
    t.is(sha256(whole.body), sha256(big.bytes));
  },
);

test.serial(
  'an IPv6 client is counted by its /64: its addresses share DOWNLOADS_PER_IP and UPLOADS_PER_IP, another /64 has its own',
  async (t) => {
    const { api } = await apiWith(t, {
      TRUST_PROXY_HOPS: '1',
      DOWNLOADS_PER_IP: '2',
      DOWNLOADS_PER_TRANSFER: '100',
      UPLOADS_PER_IP: '1',
    });
    const from = (address: string) => ({ 'X-Forwarded-For': address });
    const url = () => downloadUrl(api, big.shortCode);
    const subscriber = ['2001:db8:1:2::1', '2001:db8:1:2:ffff::2', '2001:db8:1:2:abcd:1:2:3'];
    const admitted = [];
    for (const address of subscriber.slice(0, 2)) {
      admitted.push(await stalledDownload(t, await url(), '127.0.0.81', 15_000, from(address)));
    }
    t.deepEqual(
      admitted.map((d) => d.status),
      [200, 200],
    );
    const refused = await stalledDownload(t, await url(), '127.0.0.81', 15_000, from(subscriber[2] ?? ''));
    t.is(refused.status, 429);
    t.is(errorOf(refused.body).reason, 'downloads_per_ip');
    const neighbour = await stalledDownload(t, await url(), '127.0.0.81', 15_000, from('2001:db8:1:3::1'));
    t.is(neighbour.status, 200);

    const size = MiB;
    const created = await createTransfer(api, other.keys.test, {
      files: [0, 1, 2].map((i) => ({ name: `v6-${i}.bin`, size })),
    });
    const [one = '', two = '', three = ''] = created.upload_urls.map((entry) => entry.url);
    const held = await stalledUpload(t, one, size, Buffer.from('x'), '127.0.0.81', from(subscriber[0] ?? ''));
    t.is((await answerWithin(held, 500)).status, 0, 'still being received');
    const sameSubscriber = await stalledUpload(t, two, size, Buffer.from('x'), '127.0.0.81', from(subscriber[1] ?? ''));
    const answer = await answerWithin(sameSubscriber, 10_000);
    t.is(answer.status, 429);
    t.is(errorOf(answer.body).reason, 'uploads_per_ip');
    const elsewhere = await stalledUpload(t, three, size, Buffer.from('x'), '127.0.0.81', from('2001:db8:1:3::1'));
    t.is((await answerWithin(elsewhere, 500)).status, 0, 'another /64 is received');
  },
);

test.serial(
  "a vault owner's archive takes a download slot too: refused with 429 before any item is logged as downloaded",
  async (t) => {
    const { api } = await apiWith(t, { DOWNLOADS_MAX: '1' });
    const key = other.keys.test;
    const coffre = await api.call('POST', '/v1/coffres', { key, body: { name: 'Slots' } });
    t.is(coffre.status, 201, coffre.text);
    const bytes = content(1000);
    const item = await api.call('POST', `/v1/coffres/${coffre.body.id}/items`, {
      key,
      body: { name: 'a.bin', size: bytes.length },
    });
    t.is((await put(item.body.upload_url.url, bytes)).status, 200);
    await eventually(async () => {
      const got = await api.call('GET', `/v1/coffres/${coffre.body.id}/items/${item.body.item.id}`, { key });
      return got.body.status === 'available' ? true : undefined;
    }, 60_000);

    // A public download holds the process's only slot.
    const held = await stalledDownload(t, await downloadUrl(api, big.shortCode), '127.0.0.91');
    t.is(held.status, 200);
    const refused = await api.call('GET', `/v1/coffres/${coffre.body.id}/archive`, { key });
    t.is(refused.status, 429, refused.text);
    t.is(refused.body.error.reason, 'downloads_busy');
    const log = await api.call('GET', `/v1/coffres/${coffre.body.id}/access-log?limit=100`, { key });
    t.deepEqual(
      log.body.data.filter((entry: { action: string }) => entry.action === 'downloaded'),
      [],
      'nothing logged as downloaded',
    );

    held.socket.destroy();
    await eventually(async () => (api.services.downloads.gate.active() === 0 ? true : undefined), 10_000, 25);
    const archive = await fetch(`${api.url}/v1/coffres/${coffre.body.id}/archive`, {
      headers: { authorization: `Bearer ${key}` },
    });
    t.is(archive.status, 200);
    await archive.arrayBuffer();
  },
);
