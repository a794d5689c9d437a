import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import test from 'ava';
import { z } from 'zod';
import { unwrapDataKey } from '../lib/crypto/key-wrap.ts';
import { createEncryptStream, HEADER_SIZE, TAG_SIZE } from '../lib/crypto/segmented-aead.ts';
import { storedFileKeyAad } from '../lib/db/queries/stored-files.ts';
import { createTransferQueries } from '../lib/db/queries/transfers.ts';
import { sql } from '../lib/db/sql.ts';
import { SEGMENT_SIZE } from '../lib/uploads/parts.ts';
import { Valise } from '../sdk/src/index.ts';
import { toDirectory } from '../sdk/src/node.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { content, createTransfer, links, put, waitForTransfer } from './helpers/transfers.ts';

// Hostile storage (docs/encryption.md, "Under attack"): someone with write access to the bucket
// flips bytes, swaps segments, truncates, extends, or puts back ciphertext from an earlier upload of
// the same file. Every download through the real API must then fail loudly: refused before a byte
// (410 `content_corrupt`) when the damage is in the first segment it reads, otherwise cut off
// before its end, never a complete body; the SDK's download throws; the API logs an integrity
// failure. Never is an unverified byte of plaintext delivered.

const S = SEGMENT_SIZE;
const SEGMENT = S + TAG_SIZE;
const MiB = 1024 * 1024;
/** Five segments, the last one short. */
const SIZE = 4 * S + 1000;
/** Where segment `i` starts in a blob. */
const at = (i: number) => HEADER_SIZE + i * SEGMENT;

let api: TestApi;
let ws: TestWorkspace;
let valise: Valise;
let scratch: string;
/** What the API logged under the `integrity` tag. */
const integrityLogs: string[] = [];
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Tamper');
  valise = new Valise({ apiKey: ws.keys.live, baseUrl: api.url });
  scratch = await mkdtemp(join(tmpdir(), 'valise-tamper-'));
  api.server.events.on({ name: 'request', channels: ['app'] }, (_request, event) => {
    if (event.tags.includes('integrity')) integrityLogs.push(String(event.data));
  });
});
test.after.always(async () => {
  await api?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

type Stored = { transferId: string; shortCode: string; shareUrl: string; data: Buffer; objectKey: string };

/** A server-mode transfer of one file of `size` bytes, uploaded, scanned and active. */
async function storedFile(size = SIZE): Promise<Stored> {
  const data = content(size);
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'victim.bin', size }] });
  const uploaded = await put(created.upload_urls[0]?.url ?? '', data);
  if (uploaded.status !== 200) throw new Error(`upload: ${uploaded.status}`);
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  const [file] = await createTransferQueries(api.services.db).files(created.transfer.id);
  return {
    transferId: created.transfer.id,
    shortCode: created.transfer.short_code,
    shareUrl: created.share_url,
    data,
    objectKey: file?.object_key ?? '',
  };
}

async function readObject(key: string): Promise<Buffer> {
  const { client, bucket } = api.services.objects;
  const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from((await out.Body?.transformToByteArray()) ?? []);
}

async function writeObject(key: string, bytes: Buffer): Promise<void> {
  const { client, bucket } = api.services.objects;
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
}

/** Rewrites the stored object of `stored` through `change`. */
async function tamper(stored: Stored, change: (blob: Buffer) => Buffer): Promise<void> {
  await writeObject(stored.objectKey, change(await readObject(stored.objectKey)));
}

const flip = (offset: number) => (blob: Buffer) => {
  const altered = Buffer.from(blob);
  altered[offset] = (altered[offset] ?? 0) ^ 0x01;
  return altered;
};

type Outcome =
  | { kind: 'refused'; status: number; reason: unknown }
  | { kind: 'cut off'; received: Buffer }
  | { kind: 'complete'; status: number; body: Buffer };

/** One download of the file through a fresh link (a byte range when given), read to its end or its break. */
async function download(stored: Stored, range?: string): Promise<Outcome> {
  const issued = await links(api, stored.shortCode);
  if (issued.status !== 200) throw new Error(`links: ${issued.status} ${issued.text}`);
  return fetchOutcome(issued.body.files[0].download_url, range);
}

/** What a GET of `url` delivers, read to its end or its break. */
async function fetchOutcome(url: string, range?: string): Promise<Outcome> {
  const response = await fetch(url, range ? { headers: { range } } : {}).catch(() => null);
  // The connection closed before a response: as loud as a body cut off, with nothing delivered.
  if (!response) return { kind: 'cut off', received: Buffer.alloc(0) };
  if (response.status !== 200 && response.status !== 206) {
    const body = (await response.json()) as { error: { reason?: unknown } };
    return { kind: 'refused', status: response.status, reason: body.error.reason };
  }
  const chunks: Buffer[] = [];
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      chunks.push(Buffer.from(next.value));
    }
  } catch {
    return { kind: 'cut off', received: Buffer.concat(chunks) };
  }
  return { kind: 'complete', status: response.status, body: Buffer.concat(chunks) };
}

/** Refused before any byte, as a file whose content is corrupt (410, never a 5xx). */
function assertRefused(t: import('ava').ExecutionContext, outcome: Outcome) {
  t.like(outcome, { kind: 'refused', status: 410, reason: 'content_corrupt' }, JSON.stringify(outcome).slice(0, 300));
}

/** Cut off before its end, having delivered only verified plaintext: a prefix of the file, of at most `segments` segments. */
function assertCutOff(t: import('ava').ExecutionContext, outcome: Outcome, data: Buffer, segments: number) {
  if (outcome.kind !== 'cut off') {
    t.fail(`expected the download to break off; it was ${outcome.kind} (${JSON.stringify(outcome).slice(0, 200)})`);
    return;
  }
  t.true(outcome.received.length <= segments * S, `${outcome.received.length} bytes before the break`);
  t.true(
    outcome.received.equals(data.subarray(0, outcome.received.length)),
    'only the verified plaintext came through',
  );
}

test('a byte flipped in the header refuses the download before any byte is sent, and is logged', async (t) => {
  const stored = await storedFile();
  const logged = integrityLogs.length;
  await tamper(stored, flip(10)); // the nonce prefix: every segment's nonce and AAD change
  assertRefused(t, await download(stored));
  t.true(integrityLogs.length > logged, 'the API logged an integrity failure');
});

test("a byte flipped in a segment's body cuts the download off before that segment; a range from it is refused", async (t) => {
  const stored = await storedFile();
  await tamper(stored, flip(at(2) + 1234));
  assertCutOff(t, await download(stored), stored.data, 2);
  assertRefused(t, await download(stored, `bytes=${2 * S + 10}-${3 * S}`));
  // The segments before it are whole and authentic: a range of them is served.
  const before = await download(stored, `bytes=0-${2 * S - 1}`);
  t.like(before, { kind: 'complete', status: 206 });
  t.true(before.kind === 'complete' && before.body.equals(stored.data.subarray(0, 2 * S)));
});

test("a byte flipped in a segment's tag, or in the first segment, fails the same way", async (t) => {
  const stored = await storedFile();
  await tamper(stored, flip(at(2) - 1)); // the last byte of segment 1's tag
  assertCutOff(t, await download(stored), stored.data, 1);

  const first = await storedFile();
  await tamper(first, flip(at(0) + 5));
  assertRefused(t, await download(first));
});

test('a byte flipped in the last segment: the body never ends cleanly', async (t) => {
  const stored = await storedFile();
  await tamper(stored, flip(at(4) + 500));
  assertCutOff(t, await download(stored), stored.data, 4);
  assertRefused(t, await download(stored, `bytes=${SIZE - 10}-`));
});

test('two segments swapped: the download breaks off at the first of them', async (t) => {
  const stored = await storedFile();
  await tamper(stored, (blob) =>
    Buffer.concat([
      blob.subarray(0, at(1)),
      blob.subarray(at(2), at(3)),
      blob.subarray(at(1), at(2)),
      blob.subarray(at(3)),
    ]),
  );
  assertCutOff(t, await download(stored), stored.data, 1);
});

test('a truncated blob, at a segment boundary, inside a segment or down to its header, never downloads whole', async (t) => {
  const boundary = await storedFile();
  await tamper(boundary, (blob) => blob.subarray(0, at(4))); // the last segment dropped
  assertCutOff(t, await download(boundary), boundary.data, 4);
  // A range past the new end: the store has no such bytes, which is the blob's damage.
  assertRefused(t, await download(boundary, `bytes=${4 * S}-`));

  const inside = await storedFile();
  await tamper(inside, (blob) => blob.subarray(0, at(3) + 100));
  assertCutOff(t, await download(inside), inside.data, 3);

  const header = await storedFile();
  await tamper(header, (blob) => blob.subarray(0, HEADER_SIZE));
  assertRefused(t, await download(header));
});

test('an extended blob never downloads whole: the last segment is held until the end is proven', async (t) => {
  const stored = await storedFile();
  await tamper(stored, (blob) => Buffer.concat([blob, blob.subarray(at(1), at(2))]));
  assertCutOff(t, await download(stored), stored.data, 4);
});

test("an old upload's ciphertext of the same file, put back in place of a part, is refused (replay)", async (t) => {
  // Two parts (8 MiB of plaintext, then 1 MiB). The first upload stores part 1 under key K1 and
  // nonce prefix P1, then the client starts over from byte 0, which draws K2 and P2 and replaces
  // everything. S3 cannot read back a part of an unfinished upload, so part 1's old ciphertext is
  // sealed again here from K1 and P1 (AES-GCM is deterministic: these are the very bytes stored).
  const size = 9 * MiB;
  const data = content(size);
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'replayed.bin', size }] });
  const url = created.upload_urls[0]?.url ?? '';
  const partPlain = 8 * MiB;
  const first = await put(url, data.subarray(0, partPlain), { 'content-range': `bytes 0-${partPlain - 1}/${size}` });
  t.is(first.status, 200, JSON.stringify(first.body));
  const queries = createTransferQueries(api.services.db);
  const [before] = await queries.files(created.transfer.id);
  if (!before?.data_key_wrapped || !before.nonce_prefix) throw new Error('no key material after part 1');
  const oldPart = await sealed(
    createEncryptStream({
      key: unwrapDataKey(api.services.keyring, before.data_key_wrapped, storedFileKeyAad(before.id)),
      plaintextSize: size,
      noncePrefix: before.nonce_prefix,
      end: partPlain,
    }),
    data.subarray(0, partPlain),
  );

  t.is((await put(url, data)).status, 200, 'the upload started over from byte 0 and completed');
  await waitForTransfer(api, ws.keys.live, created.transfer.id, (tr) => tr.status === 'active');
  const [after] = await queries.files(created.transfer.id);
  t.not(after?.data_key_wrapped, before.data_key_wrapped, 'starting over drew a fresh key');
  const stored: Stored = {
    transferId: created.transfer.id,
    shortCode: created.transfer.short_code,
    shareUrl: created.share_url,
    data,
    objectKey: after?.object_key ?? '',
  };
  const current = await readObject(stored.objectKey);
  t.is(oldPart.length, at(partPlain / S), 'the old part is exactly as long as the new one');
  t.false(oldPart.equals(current.subarray(0, oldPart.length)));

  // The whole old part, header included, in place of the new one.
  await writeObject(stored.objectKey, Buffer.concat([oldPart, current.subarray(oldPart.length)]));
  assertRefused(t, await download(stored));
  assertRefused(t, await download(stored, `bytes=${3 * S}-${3 * S + 99}`));

  // Only one old segment, under the new header: the download breaks off there.
  const segment = 5;
  await writeObject(
    stored.objectKey,
    Buffer.concat([
      current.subarray(0, at(segment)),
      oldPart.subarray(at(segment), at(segment + 1)),
      current.subarray(at(segment + 1)),
    ]),
  );
  assertCutOff(t, await download(stored), data, segment);

  // Put back as it was, the file downloads whole: the refusals above were the damage's.
  await writeObject(stored.objectKey, current);
  const whole = await download(stored);
  t.true(whole.kind === 'complete' && whole.body.equals(data));
});

test("a vault item (streamed without a download link's bookkeeping): a damaged start is refused, an extended blob cut off", async (t) => {
  // Vault and intake downloads stream the decryption straight out: only the decryption itself
  // holds the last segment back until the blob is proven to end there.
  const coffre = await api.call('POST', '/v1/coffres', { key: ws.keys.live, body: { name: 'Tampered room' } });
  t.is(coffre.status, 201, coffre.text);
  const item = async () => {
    const data = content(SIZE);
    const name = `item-${randomUUID()}.bin`;
    const created = await api.call('POST', `/v1/coffres/${coffre.body.id}/items`, {
      key: ws.keys.live,
      body: { name, size: data.length },
    });
    t.is(created.status, 201, created.text);
    t.is((await put(created.body.upload_url.url, data)).status, 200);
    const path = `/v1/coffres/${coffre.body.id}/items/${created.body.item.id}`;
    await eventually(async () => {
      const found = await api.call('GET', path, { key: ws.keys.live });
      return found.body.status === 'available' ? true : undefined;
    }, 60_000);
    const objectKey = await api.services.db.oneFirst(
      sql.type(z.object({ object_key: z.string() }))`SELECT object_key FROM coffre_items WHERE name = ${name}`,
    );
    /** A fresh owner's link each time: it is minted by every read of the item. */
    const link = async () => (await api.call('GET', path, { key: ws.keys.live })).body.download_url as string;
    return { data, objectKey, link };
  };

  const extended = await item();
  await writeObject(extended.objectKey, Buffer.concat([await readObject(extended.objectKey), Buffer.alloc(SEGMENT)]));
  assertCutOff(t, await fetchOutcome(await extended.link()), extended.data, 4);

  const damaged = await item();
  await writeObject(damaged.objectKey, flip(at(0) + 99)(await readObject(damaged.objectKey)));
  assertRefused(t, await fetchOutcome(await damaged.link()));
});

test("the SDK's download of a tampered server-mode file throws, and leaves no file behind", async (t) => {
  const stored = await storedFile();
  await tamper(stored, flip(at(3) + 77));
  const into = join(scratch, 'server');
  const error = await t.throwsAsync(valise.transfers.download(stored.shareUrl, { to: toDirectory(into) }));
  t.truthy(error);
  t.deepEqual(await readdir(into).catch(() => []), [], 'nothing written for good');
});

test("end to end: a flipped byte fails the SDK's decryption, a truncated blob its download; neither leaves a file", async (t) => {
  const data = content(3 * S + 999);
  const send = () =>
    valise.transfers.send({ mode: 'e2e', files: [{ blob: new Blob([new Uint8Array(data)]), name: 'e2e.bin' }] });
  const objectKeyOf = async (transferId: string) =>
    (await createTransferQueries(api.services.db).files(transferId))[0]?.object_key ?? '';

  const flipped = await send();
  await waitForTransfer(api, ws.keys.live, flipped.transfer.id, (tr) => tr.status === 'active');
  const flippedKey = await objectKeyOf(flipped.transfer.id);
  await writeObject(flippedKey, flip(at(1) + 3)(await readObject(flippedKey)));
  const into = join(scratch, 'e2e-flipped');
  await t.throwsAsync(valise.transfers.download(flipped.shareUrl, { to: toDirectory(into) }));
  t.deepEqual(await readdir(into).catch(() => []), []);

  const truncated = await send();
  await waitForTransfer(api, ws.keys.live, truncated.transfer.id, (tr) => tr.status === 'active');
  const truncatedKey = await objectKeyOf(truncated.transfer.id);
  await writeObject(truncatedKey, (await readObject(truncatedKey)).subarray(0, at(2)));
  const cut = join(scratch, 'e2e-truncated');
  await t.throwsAsync(valise.transfers.download(truncated.shareUrl, { to: toDirectory(cut) }));
  t.deepEqual(await readdir(cut).catch(() => []), []);
  // What the server sends of a blob shorter than stored is cut off, then refused from where it broke.
  const raw = await download({
    transferId: truncated.transfer.id,
    shortCode: truncated.transfer.short_code,
    shareUrl: truncated.shareUrl,
    data: Buffer.alloc(0),
    objectKey: truncatedKey,
  });
  t.is(raw.kind, 'cut off');
  const resumed = await download(
    {
      transferId: truncated.transfer.id,
      shortCode: truncated.transfer.short_code,
      shareUrl: truncated.shareUrl,
      data: Buffer.alloc(0),
      objectKey: truncatedKey,
    },
    `bytes=${at(2) + 1}-`,
  );
  assertRefused(t, resumed);
});

/** What `stream` makes of `input`, whole. */
async function sealed(stream: NodeJS.ReadWriteStream, input: Buffer): Promise<Buffer> {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  stream.end(input);
  await done;
  return Buffer.concat(chunks);
}
