import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import {
  createDecryptStream,
  createEncryptStream,
  createHeader,
  DEFAULT_SEGMENT_SIZE,
  type DecryptOptions,
  decryptedSize,
  type EncryptOptions,
  encryptedSize,
  IntegrityError,
  parseHeader,
  plaintextRangeToBlobRange,
  SizeMismatchError,
  segmentCount,
} from '../lib/crypto/segmented-aead.ts';

const S = 4096;
const key = randomBytes(32);
const prefix = Buffer.from('0102030405060a', 'hex');

type Run = { output: Buffer; error: unknown };

/**
 * Pipes `chunks` through `stream`. The output is what the stream pushed, not
 * what a consumer happened to read before an error tore the pipe down: that
 * is what "never emits unverified plaintext" is about.
 */
async function run(stream: Transform, chunks: Buffer[]): Promise<Run> {
  const pushed: Buffer[] = [];
  const push = stream.push.bind(stream);
  stream.push = (chunk: any, encoding?: BufferEncoding) => {
    if (chunk) pushed.push(chunk);
    return push(chunk, encoding);
  };
  let error: unknown;
  try {
    await pipeline(Readable.from(chunks), stream, async (source) => {
      for await (const chunk of source) void chunk;
    });
  } catch (caught) {
    error = caught;
  }
  return { output: Buffer.concat(pushed), error };
}

async function encrypt(
  plaintext: Buffer,
  options: Partial<EncryptOptions> = {},
  chunks = [plaintext],
): Promise<Buffer> {
  const { output, error } = await run(
    createEncryptStream({ key, plaintextSize: plaintext.length, segmentSize: S, noncePrefix: prefix, ...options }),
    chunks,
  );
  if (error) throw error;
  return output;
}

async function decrypt(blob: Buffer, options: Partial<DecryptOptions> = {}, chunks = [blob]): Promise<Buffer> {
  const { output, error } = await run(createDecryptStream({ key, ...options }), chunks);
  if (error) throw error;
  return output;
}

/** Splits a buffer at the given cut points (sorted, deduplicated, out-of-range ignored). */
function split(buffer: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.filter((cut) => cut > 0 && cut < buffer.length))].sort((a, b) => a - b);
  return [0, ...points].map((start, i) => buffer.subarray(start, points[i] ?? buffer.length));
}

const oneByteChunks = (buffer: Buffer) => Array.from({ length: buffer.length }, (_, i) => buffer.subarray(i, i + 1));

/** Seals segments by hand, with any index and flag: blobs the encoder would never write. */
function craft(header: Buffer, segments: Array<{ plaintext: Buffer; index: number; final: boolean }>): Buffer {
  const parsed = parseHeader(header);
  const sealed = segments.map(({ plaintext, index, final }) => {
    const nonce = Buffer.concat([parsed.noncePrefix, Buffer.alloc(5)]);
    nonce.writeUInt32BE(index, 7);
    nonce[11] = final ? 1 : 0;
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(header);
    return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  });
  return Buffer.concat([header, ...sealed]);
}

/** The blob's segments (ciphertext ‖ tag), header excluded. */
function segmentsOf(blob: Buffer, plaintextSize: number): Buffer[] {
  return Array.from({ length: segmentCount(plaintextSize, S) }, (_, i) => {
    const start = 16 + i * (S + 16);
    return blob.subarray(start, Math.min(start + S + 16, blob.length));
  });
}

// ---------------------------------------------------------------------------

for (const segmentSize of [S, DEFAULT_SEGMENT_SIZE]) {
  const s = segmentSize;
  test(`round trips at segment size ${s}: 0, 1, S-1, S, S+1, 3S, 3S+7 bytes`, async (t) => {
    for (const size of [0, 1, s - 1, s, s + 1, 3 * s, 3 * s + 7]) {
      const plaintext = randomBytes(size);
      const blob = await encrypt(plaintext, { segmentSize: s, noncePrefix: undefined });
      t.is(blob.length, encryptedSize(size, s), `size ${size}`);
      t.is(decryptedSize(blob.length, s), size);
      t.is(parseHeader(blob).segmentSize, s);
      t.deepEqual(await decrypt(blob), plaintext, `size ${size}`);
      t.deepEqual(await decrypt(blob, { plaintextSize: size }), plaintext, `size ${size}, declared`);
    }
  });
}

test('an empty plaintext is a header and one empty final segment', async (t) => {
  const blob = await encrypt(Buffer.alloc(0));
  t.is(blob.length, 32);
  t.deepEqual(blob, craft(createHeader(S, prefix), [{ plaintext: Buffer.alloc(0), index: 0, final: true }]));
});

test('size math', (t) => {
  t.is(segmentCount(0, S), 1);
  t.is(segmentCount(1, S), 1);
  t.is(segmentCount(S, S), 1);
  t.is(segmentCount(S + 1, S), 2);
  t.is(encryptedSize(0, S), 32);
  t.is(encryptedSize(3 * S + 7, S), 16 + 3 * S + 7 + 4 * 16);
  // Two segments a u32 index can't address, at the smallest segment size: 16 TiB is the limit there.
  t.is(segmentCount(2 ** 32 * S, S), 2 ** 32);
  t.throws(() => segmentCount(2 ** 32 * S + 1, S), { instanceOf: RangeError });
  for (const bad of [4095, 16 * 1024 * 1024 + 1, 4096.5])
    t.throws(() => segmentCount(1, bad), { instanceOf: RangeError });
  t.throws(() => segmentCount(-1, S), { instanceOf: RangeError });
  for (const size of [0, 1, S - 1, S, S + 1, 2 * S, 5 * S + 15, 5 * S + 16]) {
    t.is(decryptedSize(encryptedSize(size, S), S), size);
  }
  // Too short, a segment shorter than a tag, and an empty last segment after a full one: no blob has these sizes.
  for (const blobSize of [0, 16, 31, 16 + S + 16 + 15, 16 + S + 16 + 16]) {
    t.is(decryptedSize(blobSize, S), null, `blob size ${blobSize}`);
  }
});

test('headers', (t) => {
  const header = createHeader(S, prefix);
  t.is(header.toString('hex'), `56414c3100001000${prefix.toString('hex')}00`);
  t.deepEqual(parseHeader(header), { segmentSize: S, noncePrefix: prefix, bytes: header });
  t.is(createHeader().readUInt32BE(4), DEFAULT_SEGMENT_SIZE);
  t.notDeepEqual(createHeader().subarray(8), createHeader().subarray(8));
  const bad = (edit: (b: Buffer) => void) => {
    const copy = Buffer.from(header);
    edit(copy);
    return copy;
  };
  for (const broken of [
    header.subarray(0, 15),
    bad((b) => b.write('VAL2', 0)),
    bad((b) => b.writeUInt32BE(4095, 4)),
    bad((b) => b.writeUInt32BE(16 * 1024 * 1024 + 1, 4)),
    bad((b) => {
      b[15] = 1;
    }),
  ]) {
    t.throws(() => parseHeader(broken), { instanceOf: IntegrityError });
  }
  t.throws(() => createHeader(S, Buffer.alloc(8)), { instanceOf: TypeError });
});

test('the output does not depend on how the input is chunked', async (t) => {
  const plaintext = randomBytes(3 * S + 7);
  const blob = await encrypt(plaintext);
  t.deepEqual(await encrypt(plaintext, {}, oneByteChunks(plaintext)), blob);
  t.deepEqual(await decrypt(blob, {}, oneByteChunks(blob)), plaintext);
  t.deepEqual(await decrypt(blob, { plaintextSize: plaintext.length }, oneByteChunks(blob)), plaintext);
  const cuts = fc.array(fc.nat(3 * S + 7 + 64), { maxLength: 40 });
  await fc.assert(
    fc.asyncProperty(fc.nat(3 * S + 7), cuts, cuts, fc.boolean(), async (size, plainCuts, blobCuts, declared) => {
      const input = plaintext.subarray(0, size);
      const expected = await encrypt(input);
      const sealed = await encrypt(input, {}, split(input, plainCuts));
      const opened = await decrypt(sealed, declared ? { plaintextSize: size } : {}, split(sealed, blobCuts));
      return sealed.equals(expected) && opened.equals(input);
    }),
    { numRuns: 60 },
  );
  t.pass();
});

test('an interrupted upload resumes at a segment boundary with the original nonce prefix', async (t) => {
  const plaintext = randomBytes(3 * S + 7);
  const whole = await encrypt(plaintext, { noncePrefix: undefined });
  const noncePrefix = parseHeader(whole).noncePrefix;
  // The first upload stops after two segments' worth of input, so its stream ends short.
  const first = await run(
    createEncryptStream({ key, plaintextSize: plaintext.length, segmentSize: S, noncePrefix }),
    split(plaintext.subarray(0, 2 * S), [100, S + 5]),
  );
  t.true(first.error instanceof SizeMismatchError);
  t.is(first.output.length, 16 + 2 * (S + 16));
  const rest = await encrypt(plaintext.subarray(2 * S), {
    noncePrefix,
    firstSegment: 2,
    plaintextSize: plaintext.length,
  });
  t.deepEqual(Buffer.concat([first.output, rest]), whole);
  // The last segment alone, too.
  const last = await encrypt(plaintext.subarray(3 * S), {
    noncePrefix,
    firstSegment: 3,
    plaintextSize: plaintext.length,
  });
  t.deepEqual(last, whole.subarray(16 + 3 * (S + 16)));
  t.throws(() => createEncryptStream({ key, plaintextSize: plaintext.length, segmentSize: S, firstSegment: 2 }), {
    instanceOf: TypeError,
  });
  t.throws(() => createEncryptStream({ key, plaintextSize: 3 * S, segmentSize: S, noncePrefix, firstSegment: 3 }), {
    instanceOf: RangeError,
  });
});

test('chunks sealed one by one with `end` form exactly the blob of one pass', async (t) => {
  const plaintext = randomBytes(5 * S + 11);
  const whole = await encrypt(plaintext);
  const first = await encrypt(plaintext.subarray(0, 2 * S), { end: 2 * S, plaintextSize: plaintext.length });
  const middle = await encrypt(plaintext.subarray(2 * S, 4 * S), {
    firstSegment: 2,
    end: 4 * S,
    plaintextSize: plaintext.length,
  });
  const last = await encrypt(plaintext.subarray(4 * S), { firstSegment: 4, plaintextSize: plaintext.length });
  t.deepEqual(Buffer.concat([first, middle, last]), whole, 'only the true last segment carries the final flag');
  const short = await run(
    createEncryptStream({ key, plaintextSize: plaintext.length, segmentSize: S, noncePrefix: prefix, end: 2 * S }),
    [plaintext.subarray(0, 2 * S - 1)],
  );
  t.true(short.error instanceof SizeMismatchError, 'a chunk must carry all its bytes');
  for (const end of [S + 1, 0, 6 * S]) {
    t.throws(
      () => createEncryptStream({ key, plaintextSize: plaintext.length, segmentSize: S, noncePrefix: prefix, end }),
      {
        instanceOf: RangeError,
      },
    );
  }
});

/**
 * Offsets next to every segment boundary, plus a few inside segments: all
 * pairs of a multi-segment blob would be tens of millions at S = 4096.
 */
function rangeOffsets(size: number): number[] {
  if (size <= 64) return Array.from({ length: size }, (_, i) => i);
  const offsets = new Set<number>();
  for (let boundary = 0; boundary <= size; boundary += S) {
    for (let d = -3; d <= 3; d++) offsets.add(boundary + d);
    offsets.add(boundary + S / 2);
  }
  for (let d = 1; d <= 3; d++) offsets.add(size - d);
  return [...offsets].filter((offset) => offset >= 0 && offset < size).sort((a, b) => a - b);
}

test('every range decrypts to its slice, fetching and opening only its segments', async (t) => {
  for (const size of [64, 2 * S, 3 * S + 7]) {
    const plaintext = randomBytes(size);
    const blob = await encrypt(plaintext);
    const header = blob.subarray(0, 16);
    const offsets = rangeOffsets(size);
    let pairs = 0;
    for (const start of offsets) {
      for (const end of offsets) {
        if (end < start) continue;
        const range = plaintextRangeToBlobRange(start, end, size, S);
        t.is(range.firstSegment, Math.floor(start / S));
        t.is(range.lastSegment, Math.floor(end / S));
        const body = blob.subarray(range.blobStart, range.blobEnd + 1);
        const { firstSegment, skip, take } = range;
        const slice = await decrypt(body, { header, plaintextSize: size, firstSegment, skip, take });
        if (!slice.equals(plaintext.subarray(start, end + 1))) t.fail(`range ${start}-${end}`);
        pairs++;
      }
    }
    t.log(`${size} bytes: ${pairs} ranges`);
  }
  // A range's segments followed by anything else (a sloppy fetch) is refused.
  const plaintext = randomBytes(3 * S + 7);
  const blob = await encrypt(plaintext);
  const range = plaintextRangeToBlobRange(S + 1, S + 2, plaintext.length, S);
  const options = { header: blob.subarray(0, 16), plaintextSize: plaintext.length, ...range };
  await t.throwsAsync(decrypt(blob.subarray(range.blobStart, range.blobEnd + 2), options), {
    instanceOf: IntegrityError,
  });
  await t.throwsAsync(decrypt(blob.subarray(range.blobStart, range.blobEnd), options), { instanceOf: IntegrityError });
});

test('range math for every start/end pair of a two-segment blob matches its real segment offsets', async (t) => {
  const size = S + 300;
  const blob = await encrypt(randomBytes(size));
  const bounds = [16, 16 + S + 16, blob.length];
  let wrong = 0;
  for (let start = 0; start < size; start++) {
    for (let end = start; end < size; end++) {
      const r = plaintextRangeToBlobRange(start, end, size, S);
      const first = start < S ? 0 : 1;
      const last = end < S ? 0 : 1;
      if (
        r.firstSegment !== first ||
        r.lastSegment !== last ||
        r.blobStart !== bounds[first] ||
        r.blobEnd + 1 !== bounds[last + 1] ||
        r.skip !== start - first * S ||
        r.take !== end - start + 1
      ) {
        wrong++;
      }
    }
  }
  t.is(wrong, 0);
});

test('range math', (t) => {
  t.deepEqual(plaintextRangeToBlobRange(0, 0, 1, S), {
    blobStart: 16,
    blobEnd: 16 + 1 + 16 - 1,
    firstSegment: 0,
    lastSegment: 0,
    skip: 0,
    take: 1,
  });
  t.deepEqual(plaintextRangeToBlobRange(S - 1, S, 3 * S + 7, S), {
    blobStart: 16,
    blobEnd: 16 + 2 * (S + 16) - 1,
    firstSegment: 0,
    lastSegment: 1,
    skip: S - 1,
    take: 2,
  });
  t.deepEqual(plaintextRangeToBlobRange(3 * S, 3 * S + 6, 3 * S + 7, S), {
    blobStart: 16 + 3 * (S + 16),
    blobEnd: encryptedSize(3 * S + 7, S) - 1,
    firstSegment: 3,
    lastSegment: 3,
    skip: 0,
    take: 7,
  });
  for (const [start, end, size] of [
    [0, 0, 0],
    [5, 4, 10],
    [0, 10, 10],
    [-1, 2, 10],
  ] as const) {
    t.throws(() => plaintextRangeToBlobRange(start, end, size, S), { instanceOf: RangeError });
  }
});

// ---------------------------------------------------------------------------
// Tampering. `limit` is how much plaintext may come out: the segments before
// the damaged one, at most.

async function refused(
  t: ExecutionContext,
  blob: Buffer,
  plaintext: Buffer,
  limit: number,
  options: Partial<DecryptOptions> = {},
) {
  const result = await run(createDecryptStream({ key, ...options }), [blob]);
  t.true(result.error instanceof IntegrityError, `expected an IntegrityError, got ${result.error}`);
  t.true(result.output.length <= limit, `emitted ${result.output.length} bytes, more than ${limit}`);
  t.deepEqual(result.output, plaintext.subarray(0, result.output.length));
}

// Both ways of reading a blob: to its end (size unknown), and to a declared size.
const modes = [false, true];
const optionsFor = (declared: boolean, size: number) => (declared ? { plaintextSize: size } : {});

test('one flipped bit anywhere in the blob is refused, before its segment is emitted', async (t) => {
  const plaintext = randomBytes(S + 7);
  const blob = await encrypt(plaintext);
  const flip = (position: number, bit: number) => {
    const copy = Buffer.from(blob);
    copy[position] = (copy[position] as number) ^ (1 << bit);
    return copy;
  };
  // Every header bit, then every byte of the body (header, ciphertext and tags) with one bit in each.
  const cases: Array<[number, number]> = [];
  for (let position = 0; position < 16; position++) for (let bit = 0; bit < 8; bit++) cases.push([position, bit]);
  for (let position = 16; position < blob.length; position++) cases.push([position, position % 8]);
  for (const [position, bit] of cases) {
    const segment = position < 16 ? 0 : Math.floor((position - 16) / (S + 16));
    const declared = position % 5 === 0 ? { plaintextSize: plaintext.length } : {};
    const result = await run(createDecryptStream({ key, ...declared }), [flip(position, bit)]);
    if (
      !(result.error instanceof IntegrityError) ||
      result.output.length > segment * S ||
      !result.output.equals(plaintext.subarray(0, result.output.length))
    ) {
      t.fail(`bit ${bit} of byte ${position}: ${result.error}, ${result.output.length} bytes out`);
    }
  }
  t.log(`${cases.length} flips`);
  t.pass();
});

test('truncation, at a segment boundary or inside one, is refused', async (t) => {
  const plaintext = randomBytes(3 * S + 7);
  const blob = await encrypt(plaintext);
  const boundary = (i: number) => 16 + i * (S + 16);
  for (const mode of modes) {
    for (const cut of [0, 8, 15, 16, boundary(1), boundary(2), boundary(3), boundary(1) + 100, blob.length - 1]) {
      // Whatever was complete before the cut may be emitted; the segment cut through (or missing) may not.
      const complete = Math.max(0, Math.floor((cut - 16) / (S + 16)));
      await refused(t, blob.subarray(0, cut), plaintext, complete * S, optionsFor(mode, plaintext.length));
    }
  }
  // A truncated blob can be a valid shorter blob only if its last segment says so: a declared size catches it.
  const short = craft(blob.subarray(0, 16), [
    { plaintext: plaintext.subarray(0, S), index: 0, final: false },
    { plaintext: plaintext.subarray(S, 2 * S), index: 1, final: true },
  ]);
  t.deepEqual(await decrypt(short), plaintext.subarray(0, 2 * S));
  await refused(t, short, plaintext, 2 * S, { plaintextSize: plaintext.length });
});

test('dropped, swapped and appended segments are refused', async (t) => {
  const plaintext = randomBytes(3 * S + 7);
  const blob = await encrypt(plaintext);
  const header = blob.subarray(0, 16);
  const [s0, s1, s2, s3] = segmentsOf(blob, plaintext.length) as [Buffer, Buffer, Buffer, Buffer];
  for (const mode of modes) {
    const options = optionsFor(mode, plaintext.length);
    await refused(t, Buffer.concat([header, s0, s2, s3]), plaintext, S, options);
    await refused(t, Buffer.concat([header, s0, s2, s1, s3]), plaintext, S, options);
    await refused(t, Buffer.concat([header, s1, s0, s2, s3]), plaintext, 0, options);
    // Appended bytes fail the blob before its last segment is emitted: an extended blob never reads whole.
    await refused(t, Buffer.concat([header, s0, s1, s2, s3, s1]), plaintext, 3 * S, options);
    await refused(t, Buffer.concat([header, s0, s1, s2, s3, s3]), plaintext, 3 * S, options);
    await refused(t, Buffer.concat([blob, Buffer.from([0])]), plaintext, 3 * S, options);
  }
  // Without a declared size, an appended segment turns the real last one into a middle one, which fails.
  await refused(t, Buffer.concat([header, s0, s1, s2, s3, s1]), plaintext, 3 * S);
  // Segments of another blob under the same key fail too: its header (nonce prefix) differs.
  const other = await encrypt(plaintext, { noncePrefix: undefined });
  await refused(t, Buffer.concat([header, s0, segmentsOf(other, plaintext.length)[1] as Buffer, s2, s3]), plaintext, S);
  await refused(t, Buffer.concat([other.subarray(0, 16), s0, s1, s2, s3]), plaintext, 0);
});

test('a final flag in the wrong place is refused', async (t) => {
  const plaintext = randomBytes(3 * S + 7);
  const header = createHeader(S, prefix);
  const segment = (index: number, final: boolean) => ({
    plaintext: plaintext.subarray(index * S, (index + 1) * S),
    index,
    final,
  });
  const early = craft(header, [segment(0, false), segment(1, true), segment(2, false), segment(3, true)]);
  const never = craft(header, [segment(0, false), segment(1, false), segment(2, false), segment(3, false)]);
  const twice = craft(header, [segment(0, true), segment(1, true), segment(2, true), segment(3, true)]);
  for (const mode of modes) {
    const options = optionsFor(mode, plaintext.length);
    await refused(t, early, plaintext, S, options);
    await refused(t, never, plaintext, 3 * S, options);
    await refused(t, twice, plaintext, 0, options);
  }
  // The encoding is canonical: S bytes are one full final segment, never a full one and an empty one.
  const padded = craft(header, [segment(0, false), { plaintext: Buffer.alloc(0), index: 1, final: true }]);
  await refused(t, padded, plaintext, S);
  await refused(t, padded, plaintext, S, { plaintextSize: S });
});

test('a wrong key opens nothing', async (t) => {
  const plaintext = randomBytes(3 * S + 7);
  const blob = await encrypt(plaintext);
  for (const mode of modes) {
    const result = await run(createDecryptStream({ key: randomBytes(32), ...optionsFor(mode, plaintext.length) }), [
      blob,
    ]);
    t.true(result.error instanceof IntegrityError);
    t.is((result.error as IntegrityError).segment, 0);
    t.is(result.output.length, 0);
  }
});

test('encrypting more or fewer bytes than declared fails with SizeMismatchError', async (t) => {
  const plaintext = randomBytes(2 * S);
  const attempt = (declared: number, chunks: Buffer[], options: Partial<EncryptOptions> = {}) =>
    run(createEncryptStream({ key, plaintextSize: declared, segmentSize: S, noncePrefix: prefix, ...options }), chunks);
  const long = await attempt(2 * S - 1, [plaintext]);
  t.like(long.error, { name: 'SizeMismatchError', expected: 2 * S - 1, received: 2 * S });
  t.is(long.output.length, 0);
  // Excess arriving after the declared bytes: the complete blob is out already, the error must fail the upload.
  const longLater = await attempt(S + 10, split(plaintext, [S, S + 10]));
  t.like(longLater.error, { expected: S + 10, received: 2 * S });
  t.is(longLater.output.length, encryptedSize(S + 10, S));
  const short = await attempt(2 * S + 1, split(plaintext, [7]));
  t.true(short.error instanceof SizeMismatchError);
  t.like(short.error, { expected: 2 * S + 1, received: 2 * S });
  t.is(short.output.length, 16 + 2 * (S + 16), 'the complete segments, none of them final');
  const none = await attempt(1, []);
  t.like(none.error, { expected: 1, received: 0 });
  const resumedLong = await attempt(3 * S, [plaintext], { firstSegment: 2 });
  t.like(resumedLong.error, { expected: S, received: 2 * S });
  t.true((await attempt(0, [Buffer.alloc(1)])).error instanceof SizeMismatchError);
});

test('options are checked when a stream is created', (t) => {
  t.throws(() => createEncryptStream({ key: randomBytes(16), plaintextSize: 1 }), { instanceOf: TypeError });
  t.throws(() => createEncryptStream({ key, plaintextSize: -1 }), { instanceOf: RangeError });
  t.throws(() => createEncryptStream({ key, plaintextSize: 1, segmentSize: 1024 }), { instanceOf: RangeError });
  t.throws(() => createDecryptStream({ key: randomBytes(31) }), { instanceOf: TypeError });
  t.throws(() => createDecryptStream({ key, firstSegment: 1 }), { instanceOf: TypeError });
  t.throws(() => createDecryptStream({ key, take: 1 }), { instanceOf: TypeError });
  const header = createHeader(S, prefix);
  t.throws(() => createDecryptStream({ key, header, plaintextSize: S, firstSegment: 1 }), { instanceOf: RangeError });
  t.throws(() => createDecryptStream({ key, header, plaintextSize: 10, skip: 3, take: 8 }), { instanceOf: RangeError });
  t.throws(() => createDecryptStream({ key, header: Buffer.alloc(16) }), { instanceOf: IntegrityError });
});

test('64 MiB stream through both transforms in bounded memory', async (t) => {
  const total = 64 * 1024 * 1024;
  const chunk = 100_003; // not a multiple of anything the format uses
  const inputHash = createHash('sha256');
  const outputHash = createHash('sha256');
  // Allocation alone says little (garbage waits for the collector), so memory is sampled after collecting.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  let peak = 0;
  let received = 0;
  let pieces = 0;
  async function* generate() {
    for (let offset = 0; offset < total; offset += chunk) {
      const piece = randomBytes(Math.min(chunk, total - offset));
      inputHash.update(piece);
      yield piece;
    }
  }
  await pipeline(
    generate,
    createEncryptStream({ key, plaintextSize: total }),
    createDecryptStream({ key, plaintextSize: total }),
    async (source) => {
      for await (const piece of source as AsyncIterable<Buffer>) {
        outputHash.update(piece);
        received += piece.length;
        if (++pieces % 64 === 0) {
          // Twice: backing stores freed by one collection are swept concurrently, and counted until then.
          gc();
          gc();
          peak = Math.max(peak, process.memoryUsage().arrayBuffers);
        }
      }
    },
  );
  t.is(received, total);
  t.is(outputHash.digest('hex'), inputHash.digest('hex'));
  t.log(`peak retained arrayBuffers ${(peak / 2 ** 20).toFixed(1)} MiB over ${pieces} pieces`);
  // About half a MiB alone; the other tests of this file run alongside and hold a few MiB at most.
  t.true(peak < 16 * 2 ** 20, `peak ${peak}`);
});

// ---------------------------------------------------------------------------
// The vector published in docs/encryption.md, re-derived here: if the code
// or the document changes alone, this fails.

const VECTOR = {
  key: Buffer.from(Array.from({ length: 32 }, (_, i) => i)),
  noncePrefix: Buffer.from('a0a1a2a3a4a5a6', 'hex'),
  plaintext: Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251)),
  blobSize: 5048,
  tags: ['debdd9f7877c70ad34f7e52afc8e14f4', '97eeb54131160303665e7986c075c561'],
  sha256: '7ed233c7cd2a43902d142ef77cec67dfd5f0ba579cf8b0f1311baa9e3e65dc30',
  first64:
    '56414c3100001000a0a1a2a3a4a5a6000ad01eaa9251433a642ace8b950d5864c2d05d566f72eb16174ee0f928d253ea687121a478e7aecca4211bc242949220',
};

test('the published test vector', async (t) => {
  const { output: blob } = await run(
    createEncryptStream({ key: VECTOR.key, plaintextSize: 5000, segmentSize: 4096, noncePrefix: VECTOR.noncePrefix }),
    [VECTOR.plaintext],
  );
  t.is(blob.length, VECTOR.blobSize);
  t.is(createHash('sha256').update(blob).digest('hex'), VECTOR.sha256);
  t.is(blob.subarray(0, 64).toString('hex'), VECTOR.first64);
  t.deepEqual([blob.subarray(4112, 4128).toString('hex'), blob.subarray(-16).toString('hex')], VECTOR.tags);
  const { output } = await run(createDecryptStream({ key: VECTOR.key }), [blob]);
  t.deepEqual(output, VECTOR.plaintext);
  const doc = readFileSync(new URL('../docs/encryption.md', import.meta.url), 'utf8').replace(/\s+/g, '');
  t.true(doc.includes(VECTOR.sha256), 'docs/encryption.md publishes the SHA-256');
  t.true(doc.includes(VECTOR.first64), 'docs/encryption.md publishes the first 64 bytes');
  t.true(doc.includes(`${VECTOR.blobSize}bytes`), 'docs/encryption.md publishes the size');
  for (const tag of VECTOR.tags) t.true(doc.includes(tag), 'docs/encryption.md publishes the tags');
  t.true(doc.includes('byte`i`=`imod251`'), 'docs/encryption.md defines the plaintext');
});

// The WebCrypto recipe of docs/encryption.md, transcribed: a second,
// independent implementation that must agree with the streams byte for byte.
const subtle = globalThis.crypto.subtle;

function webNonce(prefix7: Uint8Array, index: number, final: boolean): Uint8Array<ArrayBuffer> {
  const nonce = new Uint8Array(12);
  nonce.set(prefix7, 0);
  new DataView(nonce.buffer).setUint32(7, index, false);
  nonce[11] = final ? 1 : 0;
  return nonce;
}

async function webEncrypt(rawKey: Uint8Array<ArrayBuffer>, prefix7: Uint8Array, segmentSize: number, data: Uint8Array) {
  const cryptoKey = await subtle.importKey('raw', rawKey, 'AES-GCM', false, ['encrypt']);
  const header = new Uint8Array(16);
  header.set(new TextEncoder().encode('VAL1'), 0);
  new DataView(header.buffer).setUint32(4, segmentSize, false);
  header.set(prefix7, 8);
  const count = Math.max(1, Math.ceil(data.length / segmentSize));
  const parts: Uint8Array[] = [header];
  for (let i = 0; i < count; i++) {
    const iv = webNonce(prefix7, i, i === count - 1);
    const chunk = new Uint8Array(data.subarray(i * segmentSize, (i + 1) * segmentSize));
    parts.push(new Uint8Array(await subtle.encrypt({ name: 'AES-GCM', iv, additionalData: header }, cryptoKey, chunk)));
  }
  return Buffer.concat(parts);
}

async function webDecryptRange(
  rawKey: Uint8Array<ArrayBuffer>,
  header: Uint8Array<ArrayBuffer>,
  plaintextSize: number,
  start: number,
  end: number,
  fetchRange: (first: number, last: number) => Uint8Array,
) {
  const view = new DataView(header.buffer, header.byteOffset);
  const segmentSize = view.getUint32(4, false);
  const prefix7 = header.slice(8, 15);
  const count = Math.max(1, Math.ceil(plaintextSize / segmentSize));
  const firstSegment = Math.floor(start / segmentSize);
  const lastSegment = Math.floor(end / segmentSize);
  const lastLength = Math.min(segmentSize, plaintextSize - lastSegment * segmentSize);
  const blobStart = 16 + firstSegment * (segmentSize + 16);
  const blobEnd = 16 + lastSegment * (segmentSize + 16) + lastLength + 16 - 1;
  const body = fetchRange(blobStart, blobEnd);
  const cryptoKey = await subtle.importKey('raw', rawKey, 'AES-GCM', false, ['decrypt']);
  const out: Uint8Array[] = [];
  for (let i = firstSegment, offset = 0; i <= lastSegment; i++) {
    const length = Math.min(segmentSize, plaintextSize - i * segmentSize) + 16;
    const iv = webNonce(prefix7, i, i === count - 1);
    const segment = new Uint8Array(body.subarray(offset, offset + length));
    offset += length;
    out.push(new Uint8Array(await subtle.decrypt({ name: 'AES-GCM', iv, additionalData: header }, cryptoKey, segment)));
  }
  const skip = start - firstSegment * segmentSize;
  return Buffer.concat(out).subarray(skip, skip + end - start + 1);
}

test('a WebCrypto implementation following docs/encryption.md agrees', async (t) => {
  const webKey = new Uint8Array(key);
  for (const size of [0, 1, S, 3 * S + 7]) {
    const plaintext = randomBytes(size);
    const blob = await encrypt(plaintext);
    t.deepEqual(await webEncrypt(webKey, prefix, S, plaintext), blob, `size ${size}`);
    if (size === 0) continue;
    const header = new Uint8Array(blob.subarray(0, 16));
    for (const [start, end] of [
      [0, size - 1],
      [size - 1, size - 1],
      [Math.floor(size / 2), size - 1],
    ] as const) {
      const slice = await webDecryptRange(webKey, header, size, start, end, (a, b) => blob.subarray(a, b + 1));
      t.deepEqual(slice, plaintext.subarray(start, end + 1));
    }
  }
  t.deepEqual(
    createHash('sha256')
      .update(await webEncrypt(new Uint8Array(VECTOR.key), VECTOR.noncePrefix, 4096, VECTOR.plaintext))
      .digest('hex'),
    VECTOR.sha256,
  );
});
