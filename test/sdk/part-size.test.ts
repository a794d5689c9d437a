import { createHash } from 'node:crypto';
import test from 'ava';
import { Valise } from '../../sdk/src/index.ts';
import { chunkLength } from '../../sdk/src/upload.ts';
import { content, waitForTransfer } from '../helpers/transfers.ts';
import { sdkSession } from './session.ts';

// The SDK sends chunks on the boundaries of each file's own part_size, which is 8 MiB only up to
// 10,000 parts (78 GiB). UPLOAD_MAX_PARTS=2 gives these small files the larger parts of big ones.

const MiB = 1024 * 1024;
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

const sdk = sdkSession('SDK part sizes', { UPLOAD_MAX_PARTS: '2', UPLOAD_PART_BUFFER_MAX: '0' });

/** A client that sends in chunks of about 8 MiB, noting each PUT's Content-Range. */
function chunkedClient(puts: string[]) {
  const noting: typeof fetch = async (input, init) => {
    if (init?.method === 'PUT') puts.push(new Headers(init.headers).get('content-range') ?? 'whole');
    return fetch(input, init);
  };
  return new Valise({ apiKey: sdk.ws.keys.live, baseUrl: sdk.api.url, uploadChunkBytes: 8 * MiB, fetch: noting });
}

test('a chunk holds as many whole parts as fit, and at least one', (t) => {
  t.is(chunkLength(8 * MiB, 8 * MiB), 8 * MiB);
  t.is(chunkLength(32 * MiB, 8 * MiB), 32 * MiB);
  t.is(chunkLength(8 * MiB, 15 * MiB), 15 * MiB);
  t.is(chunkLength(32 * MiB, 15 * MiB), 30 * MiB);
});

for (const mode of ['server', 'e2e'] as const) {
  test(`transfers.send in chunks follows the file's part_size, not 8 MiB (${mode} mode)`, async (t) => {
    const bytes = content(30 * MiB + 99);
    const puts: string[] = [];
    const sent = await chunkedClient(puts).transfers.send({
      mode,
      files: [{ blob: new Blob([new Uint8Array(bytes)]), name: `${mode}.bin` }],
    });
    const file = sent.session.files[0];
    if (!file?.partSize) throw new Error('the session has no part size');
    t.true(file.partSize > 8 * MiB);
    const size = file.storedSize;
    t.deepEqual(puts, [`bytes 0-${file.partSize - 1}/${size}`, `bytes ${file.partSize}-${size - 1}/${size}`]);
    const transfer = await waitForTransfer(sdk.api, sdk.ws.keys.live, sent.transfer.id, (tr) => tr.status === 'active');
    t.is(transfer.files[0].upload_state, 'uploaded');
  });
}

test('uploads.put in chunks asks the upload URL for its part_size when not told', async (t) => {
  const bytes = content(20 * MiB + 3);
  const created = await sdk.valise.transfers.create({ files: [{ name: 'put.bin', size: bytes.length }] });
  const entry = created.upload_urls[0];
  if (!entry) throw new Error('no upload URL');
  t.true(entry.part_size > 8 * MiB);
  t.is((await sdk.valise.uploads.status(entry.url)).part_size, entry.part_size);
  const puts: string[] = [];
  await chunkedClient(puts).uploads.put(entry.url, { blob: new Blob([new Uint8Array(bytes)]), name: 'put.bin' });
  t.deepEqual(puts, [
    `bytes 0-${entry.part_size - 1}/${bytes.length}`,
    `bytes ${entry.part_size}-${bytes.length - 1}/${bytes.length}`,
  ]);
  const done = await waitForTransfer(sdk.api, sdk.ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  t.is(done.files[0].sha256, sha256(bytes));
});
