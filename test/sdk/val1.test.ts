import { createHash } from 'node:crypto';
import test from 'ava';
import { createDecryptStream as serverDecrypt } from '../../lib/crypto/segmented-aead.ts';
import { fileKey } from '../../sdk/src/crypto/link-key.ts';
import { createDecryptStream, createEncryptStream, decryptedSize, encryptedSize } from '../../sdk/src/index.ts';
import { skipBytes } from '../../sdk/src/sources.ts';

// The SDK's WebCrypto VAL1 against docs/encryption.md's test vector and the server's implementation.

const vectorKey = Uint8Array.from({ length: 32 }, (_, i) => i);
const vectorPrefix = Uint8Array.from([0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6]);
const vectorPlaintext = Uint8Array.from({ length: 5000 }, (_, i) => i % 251);

async function collect(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** A stream of `bytes` cut into pieces of `chunk` bytes, to exercise segment buffering. */
function streamOf(bytes: Uint8Array, chunk = 777): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + chunk));
      offset += chunk;
    },
  });
}

async function encrypt(plain: Uint8Array, S: number, key = vectorKey, prefix = vectorPrefix, chunk = 777) {
  return collect(
    streamOf(plain, chunk).pipeThrough(
      createEncryptStream({ key, noncePrefix: prefix, plaintextSize: plain.length, segmentSize: S }),
    ),
  );
}

test('encrypting the documented test vector gives the published blob', async (t) => {
  const blob = await encrypt(vectorPlaintext, 4096);
  t.is(blob.length, 5048);
  t.is(
    createHash('sha256').update(blob).digest('hex'),
    '7ed233c7cd2a43902d142ef77cec67dfd5f0ba579cf8b0f1311baa9e3e65dc30',
  );
  t.is(
    blob.subarray(0, 64).toString('hex'),
    '56414c3100001000a0a1a2a3a4a5a6000ad01eaa9251433a642ace8b950d5864c2d05d566f72eb16174ee0f928d253ea687121a478e7aecca4211bc242949220',
  );
  t.is(blob.subarray(4112, 4128).toString('hex'), 'debdd9f7877c70ad34f7e52afc8e14f4');
  t.is(blob.subarray(-16).toString('hex'), '97eeb54131160303665e7986c075c561');
});

test('decrypting the test vector gives the plaintext back, whatever the chunking', async (t) => {
  const blob = await encrypt(vectorPlaintext, 4096);
  for (const chunk of [1, 15, 16, 17, 4112, 100_000]) {
    const plain = await collect(
      streamOf(blob, chunk).pipeThrough(createDecryptStream({ key: vectorKey, blobSize: blob.length })),
    );
    t.deepEqual(new Uint8Array(plain), vectorPlaintext, `chunk ${chunk}`);
  }
});

test('sizes follow the documented formulas, and empty and exact-multiple files round-trip', async (t) => {
  for (const size of [0, 1, 4095, 4096, 4097, 8192, 12_345]) {
    const plain = Uint8Array.from({ length: size }, (_, i) => (i * 7) % 256);
    const blob = await encrypt(plain, 4096);
    t.is(blob.length, encryptedSize(size, 4096));
    t.is(decryptedSize(blob.length, 4096), size);
    const back = await collect(
      streamOf(blob).pipeThrough(createDecryptStream({ key: vectorKey, blobSize: blob.length })),
    );
    t.deepEqual(new Uint8Array(back), plain);
  }
});

test("the server's decryptor opens what the SDK encrypts", async (t) => {
  const plain = Uint8Array.from({ length: 200_000 }, (_, i) => (i * 13) % 256);
  const blob = await encrypt(plain, 65_536);
  const decipher = serverDecrypt({ key: Buffer.from(vectorKey), plaintextSize: plain.length });
  const out: Buffer[] = [];
  decipher.on('data', (chunk: Buffer) => out.push(chunk));
  const done = new Promise((resolve, reject) => decipher.on('end', resolve).on('error', reject));
  decipher.end(blob);
  await done;
  t.deepEqual(new Uint8Array(Buffer.concat(out)), plain);
});

test('re-encrypting from a segment boundary reproduces the same blob bytes (resumption)', async (t) => {
  const S = 4096;
  const plain = Uint8Array.from({ length: 30_000 }, (_, i) => (i * 31) % 256);
  const blob = await encrypt(plain, S);
  const offset = 10_000; // a blob offset inside segment 2
  const segment = Math.floor((offset - 16) / (S + 16));
  const resumed = await collect(
    streamOf(plain.slice(segment * S))
      .pipeThrough(
        createEncryptStream({
          key: vectorKey,
          noncePrefix: vectorPrefix,
          plaintextSize: plain.length,
          segmentSize: S,
          firstSegment: segment,
        }),
      )
      .pipeThrough(skipBytes(offset - (16 + segment * (S + 16)))),
  );
  t.deepEqual(resumed, blob.subarray(offset));
});

test('a flipped bit, a truncation or a trailing byte is an integrity_error', async (t) => {
  const blob = await encrypt(vectorPlaintext, 4096);
  const open = (bytes: Uint8Array, blobSize = bytes.length) =>
    collect(streamOf(bytes).pipeThrough(createDecryptStream({ key: vectorKey, blobSize })));
  const flipped = Buffer.from(blob);
  flipped[5000] = (flipped[5000] ?? 0) ^ 1;
  await t.throwsAsync(open(flipped), { message: /damaged or the key is wrong/ });
  await t.throwsAsync(open(blob.subarray(0, 4128), blob.length), { message: /truncated/ });
  await t.throwsAsync(open(Buffer.concat([blob, Buffer.from([0])]), blob.length), { message: /trailing/ });
  const wrongKey = new Uint8Array(32);
  await t.throwsAsync(
    collect(streamOf(blob).pipeThrough(createDecryptStream({ key: wrongKey, blobSize: blob.length }))),
  );
});

test('more or fewer bytes than declared fail the encryption', async (t) => {
  const make = (declared: number) =>
    collect(
      streamOf(vectorPlaintext).pipeThrough(
        createEncryptStream({ key: vectorKey, noncePrefix: vectorPrefix, plaintextSize: declared, segmentSize: 4096 }),
      ),
    );
  await t.throwsAsync(make(4999), { message: /more than/ });
  await t.throwsAsync(make(5001), { message: /fewer than/ });
});

test('a one-file link key is the file key; several files get distinct derived keys', async (t) => {
  t.deepEqual(await fileKey(vectorKey, 'a', 1), vectorKey);
  const a = await fileKey(vectorKey, '5b0c…a', 2);
  const b = await fileKey(vectorKey, '5b0c…b', 2);
  t.is(a.length, 32);
  t.notDeepEqual(a, b);
  t.notDeepEqual(a, vectorKey);
});
