import { createHash } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { PART_PLAINTEXT, SEGMENT_SIZE } from '../lib/uploads/parts.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { content, createTransfer, fetchBytes, links, put, waitForTransfer } from './helpers/transfers.ts';

// Files past 10,000 parts of 8 MiB (lib/uploads/parts.ts) through the real upload pipeline:
// their own part_size, chunks on its boundaries, and resumption after a streamed part was cut.
// A file cannot be 80 GiB here, so an API with UPLOAD_MAX_PARTS=2 gives a 30 MiB file the plan a
// 150 GiB one has, and UPLOAD_PART_BUFFER_MAX=0 streams its parts into the object store as a 5 TiB
// file's are. Beside it, the default API: a declared 100 GiB transfer is created and starts.

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

let bigParts: TestApi;
let defaults: TestApi;
let owner: TestWorkspace;

test.before(async () => {
  bigParts = await startApi({
    UPLOAD_MAX_PARTS: '2',
    UPLOAD_PART_BUFFER_MAX: '0',
    TRANSFER_MAX_FILE_BYTES: String(20 * GiB),
  });
  defaults = await startApi();
  owner = await bigParts.workspace('Big parts');
});
test.after.always(async () => {
  await bigParts?.close();
  await defaults?.close();
});

const range = (start: number, end: number, size: number) => ({ 'content-range': `bytes ${start}-${end - 1}/${size}` });

async function headOffset(url: string): Promise<number> {
  const response = await fetch(url, { method: 'HEAD' });
  return Number(response.headers.get('upload-offset'));
}

/** Sends `size` bytes' headers and `sent` of them on a raw socket, then cuts the connection. */
async function cutUpload(url: string, size: number, sent: Buffer) {
  const target = new URL(url);
  const socket = net.connect(Number(target.port), target.hostname);
  await once(socket, 'connect');
  socket.resume();
  socket.write(
    `PUT ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${size}\r\n\r\n`,
  );
  await new Promise<void>((resolve, reject) => socket.write(sent, (error) => (error ? reject(error) : resolve())));
  socket.destroy();
}

async function downloaded(api: TestApi, key: string, transferId: string, shortCode: string) {
  await waitForTransfer(api, key, transferId, (transfer) => transfer.status === 'active');
  const answer = await links(api, shortCode);
  return (await fetchBytes(answer.body.files[0].download_url)).bytes;
}

test('a file past its 8 MiB plan gets its own part_size, and chunks must end on it', async (t) => {
  const bytes = content(30 * MiB + 12_345);
  const size = bytes.length;
  const created = await createTransfer(bigParts, owner.keys.test, { files: [{ name: 'big.bin', size }] });
  const entry = created.upload_urls[0];
  if (!entry) throw new Error('no upload URL');
  const partSize = Math.ceil(size / (2 * SEGMENT_SIZE)) * SEGMENT_SIZE;
  t.is(entry.part_size, partSize);
  t.not(partSize, PART_PLAINTEXT);

  // The old part size is no boundary of this file.
  const eightMiB = await put(entry.url, bytes.subarray(0, PART_PLAINTEXT), range(0, PART_PLAINTEXT, size));
  t.is(eightMiB.status, 400);
  t.is(eightMiB.body.error.param, 'Content-Range');
  t.true(String(eightMiB.body.error.message).includes(String(partSize)));

  const first = await put(entry.url, bytes.subarray(0, partSize), range(0, partSize, size));
  t.is(first.status, 200);
  t.is(first.headers.get('upload-offset'), String(partSize));
  t.is(await headOffset(entry.url), partSize);
  const rest = await put(entry.url, bytes.subarray(partSize), range(partSize, size, size));
  t.is(rest.status, 200);
  t.is(rest.body.upload_state, 'uploaded');

  const back = await downloaded(bigParts, owner.keys.test, created.transfer.id, created.transfer.short_code);
  t.is(sha256(back), sha256(bytes));
});

for (const mode of ['server', 'e2e'] as const) {
  test(`an upload cut inside a streamed part keeps the parts before it and resumes there (${mode})`, async (t) => {
    const bytes = content(30 * MiB + 777);
    const size = bytes.length;
    const created = await createTransfer(bigParts, owner.keys.test, {
      encryption_mode: mode,
      files: [{ name: `cut-${mode}.bin`, size }],
    });
    const entry = created.upload_urls[0];
    if (!entry) throw new Error('no upload URL');
    const partSize = entry.part_size;

    // Part 1 whole, then 3 MiB of part 2, streaming into the object store when the connection goes.
    await cutUpload(entry.url, size, bytes.subarray(0, partSize + 3 * MiB));
    const offset = await eventually(async () => ((await headOffset(entry.url)) === partSize ? partSize : undefined));
    t.is(offset, partSize, 'the cut part is not recorded, the one before it is');

    // The cut request lets go of the upload once its parts are settled; until then a resume is told to wait (409).
    const resumed = await eventually(async () => {
      const answer = await put(entry.url, bytes.subarray(offset), range(offset, size, size));
      return answer.status === 409 && answer.body.error.upload_offset === undefined ? undefined : answer;
    });
    t.is(resumed.status, 200, JSON.stringify(resumed.body));
    t.is(resumed.body.upload_state, 'uploaded');
    t.is(await headOffset(entry.url), size);

    const back = await downloaded(bigParts, owner.keys.test, created.transfer.id, created.transfer.short_code);
    t.is(sha256(back), sha256(bytes));
  });
}

test('a declared size that cannot fit in parts S3 takes is refused with a 400 naming the field', async (t) => {
  // 2 parts of at most 5 GiB each cannot hold 10 GiB sealed (server mode adds a tag per segment).
  const answer = await bigParts.call('POST', '/v1/transfers', {
    key: owner.keys.test,
    body: {
      files: [
        { name: 'a.bin', size: 1 },
        { name: 'b.bin', size: 10 * GiB },
      ],
    },
  });
  t.is(answer.status, 400);
  t.is(answer.body.error.code, 'validation_error');
  t.is(answer.body.error.param, 'files.1.size');
});

test('a declared 100 GiB transfer is created with 10.25 MiB parts, takes its first chunks, resumes, and is revoked', async (t: ExecutionContext) => {
  const workspace = await defaults.workspace('A 100 GiB file');
  const size = 100 * GiB;
  const created = await createTransfer(defaults, workspace.keys.test, { files: [{ name: 'huge.bin', size }] });
  const entry = created.upload_urls[0];
  if (!entry) throw new Error('no upload URL');
  t.is(entry.part_size, 164 * SEGMENT_SIZE);
  const partSize = entry.part_size;
  const chunk = content(partSize);

  t.is((await put(entry.url, chunk, range(0, partSize, size))).status, 200);
  t.is(await headOffset(entry.url), partSize);
  // A second chunk resumes from the offset HEAD gave.
  const second = await put(entry.url, chunk, range(partSize, 2 * partSize, size));
  t.is(second.status, 200);
  t.is(second.body.upload_state, 'uploading');
  t.is(await headOffset(entry.url), 2 * partSize);
  const behind = await put(entry.url, chunk, range(partSize, 2 * partSize, size));
  t.is(behind.status, 409);
  t.is(behind.body.error.upload_offset, 2 * partSize);

  const revoked = await defaults.call('DELETE', `/v1/transfers/${created.transfer.id}`, { key: workspace.keys.test });
  t.is(revoked.status, 200);
  t.is((await put(entry.url, chunk, range(2 * partSize, 3 * partSize, size))).status, 410);

  const tooBig = await defaults.call('POST', '/v1/transfers', {
    key: workspace.keys.test,
    body: { files: [{ name: 'huge.bin', size: size + 1 }] },
  });
  t.is(tooBig.status, 400);
  t.is(tooBig.body.error.param, 'files.0.size');
});
