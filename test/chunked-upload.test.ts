import { createHash, randomBytes } from 'node:crypto';
import test from 'ava';
import { PART_PLAINTEXT } from '../lib/uploads/parts.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { content, createTransfer, fetchBytes, links, put, waitForTransfer } from './helpers/transfers.ts';

// Clients that cannot stream a request body (browsers without streaming
// fetch uploads) send a file in chunks: PUTs with Content-Range, each ending
// at a multiple of part_size or at the file's end, each committed on arrival.

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Chunked uploads');
});
test.after.always(() => api.close());

const range = (start: number, end: number, size: number) => ({ 'content-range': `bytes ${start}-${end - 1}/${size}` });

async function storedOffset(url: string): Promise<number> {
  const head = await fetch(url, { method: 'HEAD' });
  return Number(head.headers.get('upload-offset'));
}

/** Sends `bytes` to `url` in chunks of `part_size`, checking what the server says after each. */
async function sendInChunks(t: any, url: string, bytes: Buffer, partSize: number) {
  for (let start = 0; start < bytes.length; start += partSize) {
    const end = Math.min(bytes.length, start + partSize);
    const answer = await put(url, bytes.subarray(start, end), range(start, end, bytes.length));
    t.is(answer.status, 200, JSON.stringify(answer.body));
    t.is(answer.body.upload_offset, end);
    t.is(answer.headers.get('upload-offset'), String(end));
    t.is(answer.body.upload_state, end === bytes.length ? 'uploaded' : 'uploading');
    t.is(await storedOffset(url), end);
  }
}

test('a server-mode file sent in three part-sized chunks is stored, scanned and downloads byte-identical', async (t) => {
  const bytes = content(2 * PART_PLAINTEXT + 12_345);
  const created = await createTransfer(api, ws.keys.test, { files: [{ name: 'chunked.bin', size: bytes.length }] });
  const [entry] = created.upload_urls;
  if (!entry) return t.fail('no upload URL');
  t.is(entry.part_size, PART_PLAINTEXT);
  await sendInChunks(t, entry.url, bytes, entry.part_size);

  const active = await waitForTransfer(api, ws.keys.test, created.transfer.id, (tr) => tr.status === 'active');
  t.is(active.files[0].sha256, createHash('sha256').update(bytes).digest('hex'), 'the scan records the checksum');
  const unlocked = await links(api, created.transfer.short_code);
  const received = await fetchBytes(unlocked.body.files[0].download_url);
  t.true(received.bytes.equals(bytes));
});

test('an e2e blob sent in two chunks is stored as sent', async (t) => {
  const blob = randomBytes(PART_PLAINTEXT + 100);
  const created = await createTransfer(api, ws.keys.test, {
    encryption_mode: 'e2e',
    files: [{ name: 'sealed.val', size: blob.length }],
  });
  const [entry] = created.upload_urls;
  if (!entry) return t.fail('no upload URL');
  await sendInChunks(t, entry.url, blob, entry.part_size);
  await waitForTransfer(api, ws.keys.test, created.transfer.id, (tr) => tr.status === 'active');
  const unlocked = await links(api, created.transfer.short_code);
  t.true((await fetchBytes(unlocked.body.files[0].download_url)).bytes.equals(blob));
});

test('chunks that end off a part boundary, skip ahead or lie about their length are refused and change nothing', async (t) => {
  const bytes = content(PART_PLAINTEXT + 5000);
  const size = bytes.length;
  const created = await createTransfer(api, ws.keys.test, { files: [{ name: 'strict.bin', size }] });
  const url = created.upload_urls[0]?.url ?? '';

  const offBoundary = await put(url, bytes.subarray(0, 1_000_000), range(0, 1_000_000, size));
  t.is(offBoundary.status, 400);
  t.is(offBoundary.body.error.code, 'validation_error');
  t.is(offBoundary.body.error.param, 'Content-Range');
  t.is(await storedOffset(url), 0);

  const wrongTotal = await put(url, bytes.subarray(0, PART_PLAINTEXT), range(0, PART_PLAINTEXT, size + 1));
  t.is(wrongTotal.status, 400);

  const ahead = await put(url, bytes.subarray(PART_PLAINTEXT), range(PART_PLAINTEXT, size, size));
  t.is(ahead.status, 409);
  t.is(ahead.body.error.upload_offset, 0);

  const short = await put(url, bytes.subarray(0, PART_PLAINTEXT - 1), range(0, PART_PLAINTEXT, size));
  t.is(short.status, 400);
  t.is(short.body.error.param, 'Content-Length');
  t.is(await storedOffset(url), 0);

  // After all that, the right chunks still make the file.
  t.is((await put(url, bytes.subarray(0, PART_PLAINTEXT), range(0, PART_PLAINTEXT, size))).status, 200);
  const last = await put(url, bytes.subarray(PART_PLAINTEXT), range(PART_PLAINTEXT, size, size));
  t.is(last.status, 200);
  t.is(last.body.upload_state, 'uploaded');
  await waitForTransfer(api, ws.keys.test, created.transfer.id, (tr) => tr.status === 'active');
  const unlocked = await links(api, created.transfer.short_code);
  t.true((await fetchBytes(unlocked.body.files[0].download_url)).bytes.equals(bytes));
});
