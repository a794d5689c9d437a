import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

// The format of every stored file, in both modes: docs/encryption.md is the
// specification, this file one implementation of it (the SDK and browsers
// have others). A file is cut into segments sealed one by one with
// AES-256-GCM, so that it streams in bounded memory and a byte range can be
// served by decrypting only the segments it touches. Each nonce carries the
// segment's index and whether it is the last one, and each segment
// authenticates the header: reordering, dropping, truncating or extending a
// blob, or changing its header, all fail a tag.

export const HEADER_SIZE = 16;
export const TAG_SIZE = 16;
export const NONCE_PREFIX_SIZE = 7;
export const DEFAULT_SEGMENT_SIZE = 65_536;
export const MIN_SEGMENT_SIZE = 4096;
export const MAX_SEGMENT_SIZE = 16 * 1024 * 1024;

const MAGIC = Buffer.from('VAL1', 'ascii');
const KEY_SIZE = 32;
// The segment index is a u32 in the nonce; one more segment would reuse a nonce.
const MAX_SEGMENTS = 2 ** 32;

/** The blob is not what was encrypted: wrong key, altered, reordered, truncated or extended. */
export class IntegrityError extends Error {
  override readonly name = 'IntegrityError';
  /** The segment that failed, when one did (a header or stream-level failure has none). */
  readonly segment: number | undefined;

  constructor(message: string, segment?: number) {
    super(message);
    this.segment = segment;
  }
}

/** The plaintext fed to an encrypt stream is not the size it declared. */
export class SizeMismatchError extends Error {
  override readonly name = 'SizeMismatchError';
  /** Bytes this stream was to receive (the declared size, less the resumed segments). */
  readonly expected: number;
  /** Bytes received; when the input ran long, the count at the chunk that overflowed. */
  readonly received: number;

  constructor(expected: number, received: number) {
    super(`Expected ${expected} bytes of plaintext, received ${received > expected ? 'at least ' : ''}${received}`);
    this.expected = expected;
    this.received = received;
  }
}

export type SegmentedHeader = {
  segmentSize: number;
  noncePrefix: Buffer;
  /** The 16 header bytes, authenticated with every segment. */
  bytes: Buffer;
};

export function createHeader(
  segmentSize: number = DEFAULT_SEGMENT_SIZE,
  noncePrefix: Buffer = randomBytes(NONCE_PREFIX_SIZE),
): Buffer {
  checkSegmentSize(segmentSize);
  if (!(noncePrefix instanceof Uint8Array) || noncePrefix.length !== NONCE_PREFIX_SIZE) {
    throw new TypeError(`noncePrefix must be ${NONCE_PREFIX_SIZE} bytes`);
  }
  const header = Buffer.alloc(HEADER_SIZE);
  MAGIC.copy(header, 0);
  header.writeUInt32BE(segmentSize, 4);
  header.set(noncePrefix, 8);
  return header;
}

/** Parses the first 16 bytes of `buffer` (a header, or a whole blob). */
export function parseHeader(buffer: Buffer): SegmentedHeader {
  if (buffer.length < HEADER_SIZE) throw new IntegrityError('Truncated header');
  if (!buffer.subarray(0, 4).equals(MAGIC)) throw new IntegrityError('Not a VAL1 blob (bad magic)');
  const segmentSize = buffer.readUInt32BE(4);
  if (segmentSize < MIN_SEGMENT_SIZE || segmentSize > MAX_SEGMENT_SIZE) {
    throw new IntegrityError(`Header declares an invalid segment size (${segmentSize})`);
  }
  if (buffer[15] !== 0) throw new IntegrityError('Header reserved byte is not zero');
  const bytes = Buffer.from(buffer.subarray(0, HEADER_SIZE));
  return { segmentSize, noncePrefix: bytes.subarray(8, 8 + NONCE_PREFIX_SIZE), bytes };
}

// ---------------------------------------------------------------------------
// Size math (pure)

/** Segments in a blob; an empty plaintext still has one (empty, final) segment. */
export function segmentCount(plaintextSize: number, segmentSize: number): number {
  checkSegmentSize(segmentSize);
  checkCount(plaintextSize, 'plaintextSize');
  const count = plaintextSize === 0 ? 1 : Math.ceil(plaintextSize / segmentSize);
  if (count > MAX_SEGMENTS)
    throw new RangeError(`A ${segmentSize}-byte segment size cannot hold ${plaintextSize} bytes`);
  return count;
}

/** Blob size, header included. */
export function encryptedSize(plaintextSize: number, segmentSize: number): number {
  return HEADER_SIZE + plaintextSize + TAG_SIZE * segmentCount(plaintextSize, segmentSize);
}

/**
 * The plaintext size of a blob of `blobSize` bytes, or null when no blob with
 * these segments is that long: the encoding is canonical, so one size maps to
 * one. For e2e files, whose plaintext size the server is told but cannot
 * check. The SDK's `decryptedSize` (sdk/src/crypto/val1.ts) answers the same.
 */
export function decryptedSize(blobSize: number, segmentSize: number): number | null {
  checkSegmentSize(segmentSize);
  checkCount(blobSize, 'blobSize');
  const body = blobSize - HEADER_SIZE;
  const full = Math.floor(body / (segmentSize + TAG_SIZE));
  const rest = body % (segmentSize + TAG_SIZE);
  if (body < TAG_SIZE || (rest > 0 && rest < TAG_SIZE) || (rest === TAG_SIZE && full > 0)) return null;
  return full * segmentSize + (rest === 0 ? 0 : rest - TAG_SIZE);
}

export type BlobRange = {
  /** First blob byte to fetch (a segment's first byte; the header is fetched apart). */
  blobStart: number;
  /** Last blob byte to fetch, inclusive as in `Range: bytes=blobStart-blobEnd`. */
  blobEnd: number;
  firstSegment: number;
  lastSegment: number;
  /** Plaintext bytes to drop from the start of the first segment. */
  skip: number;
  /** Plaintext bytes to emit after that. */
  take: number;
};

/**
 * The whole segments holding plaintext bytes [start, endInclusive], for a
 * Range download that decrypts only those. Resolving open-ended and suffix
 * ranges, and clamping to the size, is the HTTP layer's job: here
 * 0 <= start <= endInclusive < plaintextSize.
 */
export function plaintextRangeToBlobRange(
  start: number,
  endInclusive: number,
  plaintextSize: number,
  segmentSize: number,
): BlobRange {
  segmentCount(plaintextSize, segmentSize);
  checkCount(start, 'start');
  checkCount(endInclusive, 'endInclusive');
  if (start > endInclusive || endInclusive >= plaintextSize) {
    throw new RangeError(`Range ${start}-${endInclusive} is not within ${plaintextSize} bytes`);
  }
  const firstSegment = Math.floor(start / segmentSize);
  const lastSegment = Math.floor(endInclusive / segmentSize);
  const lastLength = Math.min(segmentSize, plaintextSize - lastSegment * segmentSize);
  return {
    blobStart: segmentOffset(firstSegment, segmentSize),
    blobEnd: segmentOffset(lastSegment, segmentSize) + lastLength + TAG_SIZE - 1,
    firstSegment,
    lastSegment,
    skip: start - firstSegment * segmentSize,
    take: endInclusive - start + 1,
  };
}

function segmentOffset(index: number, segmentSize: number): number {
  return HEADER_SIZE + index * (segmentSize + TAG_SIZE);
}

// ---------------------------------------------------------------------------
// Encryption

export type EncryptOptions = {
  key: Buffer;
  /** Needed up front: the last segment is marked as such when it is sealed. */
  plaintextSize: number;
  segmentSize?: number;
  /** Random by default; give the original header's to resume. */
  noncePrefix?: Buffer;
  /** Resume an upload: the input starts at plaintext offset firstSegment * segmentSize, no header is emitted. */
  firstSegment?: number;
  /**
   * Encrypt one chunk of the plaintext: the input ends at this offset (a multiple of segmentSize,
   * or plaintextSize). The last segment is still marked by plaintextSize, so chunks sealed one by
   * one form the same blob as one pass.
   */
  end?: number;
};

export class EncryptStream extends Transform {
  /** The blob's header; keep it (or its nonce prefix) to resume an interrupted upload. */
  readonly header: Buffer;
  // A KeyObject, imported once: building a cipher from a raw Buffer for every
  // 64 KiB segment cost more than the encryption itself.
  readonly #key: KeyObject;
  readonly #segmentSize: number;
  readonly #noncePrefix: Buffer;
  readonly #plaintextSize: number;
  readonly #count: number;
  readonly #expected: number;
  #received = 0;
  #index: number;
  #headerSent: boolean;
  #pending: Buffer | undefined;
  #filled = 0;

  constructor(options: EncryptOptions) {
    super();
    checkKey(options.key);
    const segmentSize = options.segmentSize ?? DEFAULT_SEGMENT_SIZE;
    const firstSegment = options.firstSegment ?? 0;
    this.#count = segmentCount(options.plaintextSize, segmentSize);
    checkCount(firstSegment, 'firstSegment');
    if (firstSegment >= this.#count) throw new RangeError(`firstSegment ${firstSegment} is past the last segment`);
    // A fresh prefix on resume would give the blob two headers' worth of nonces and no valid header.
    if (firstSegment > 0 && !options.noncePrefix) throw new TypeError('Resuming needs the original noncePrefix');
    this.header = createHeader(segmentSize, options.noncePrefix);
    this.#key = createSecretKey(options.key);
    this.#segmentSize = segmentSize;
    this.#noncePrefix = this.header.subarray(8, 8 + NONCE_PREFIX_SIZE);
    this.#plaintextSize = options.plaintextSize;
    const end = options.end ?? options.plaintextSize;
    if (
      end !== options.plaintextSize &&
      (end % segmentSize !== 0 || end > options.plaintextSize || end <= firstSegment * segmentSize)
    ) {
      throw new RangeError(`end ${end} is not a segment boundary after the first segment, nor the plaintext's end`);
    }
    this.#expected = end - firstSegment * segmentSize;
    this.#index = firstSegment;
    this.#headerSent = firstSegment > 0;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.#received + chunk.length > this.#expected) {
      callback(new SizeMismatchError(this.#expected, this.#received + chunk.length));
      return;
    }
    this.#received += chunk.length;
    this.#sendHeader();
    let offset = 0;
    while (offset < chunk.length) {
      const length = this.#segmentLength();
      // Whole segments inside the chunk are sealed in place, without a copy.
      if (this.#filled === 0 && chunk.length - offset >= length) {
        this.#seal(chunk.subarray(offset, offset + length));
        offset += length;
        continue;
      }
      this.#pending ??= Buffer.allocUnsafe(this.#segmentSize);
      const n = Math.min(length - this.#filled, chunk.length - offset);
      chunk.copy(this.#pending, this.#filled, offset, offset + n);
      this.#filled += n;
      offset += n;
      if (this.#filled === length) {
        this.#seal(this.#pending.subarray(0, length));
        this.#filled = 0;
      }
    }
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.#received < this.#expected) {
      callback(new SizeMismatchError(this.#expected, this.#received));
      return;
    }
    this.#sendHeader();
    // Only an empty plaintext gets here unsealed: its one segment is empty. (A chunk that ends
    // before the plaintext does has sealed all its segments, and must not seal another.)
    if (this.#plaintextSize === 0 && this.#index < this.#count) this.#seal(Buffer.alloc(0));
    callback();
  }

  #segmentLength(): number {
    return Math.min(this.#segmentSize, this.#plaintextSize - this.#index * this.#segmentSize);
  }

  #sendHeader(): void {
    if (this.#headerSent) return;
    this.#headerSent = true;
    this.push(this.header);
  }

  #seal(plaintext: Buffer): void {
    const index = this.#index++;
    const cipher = createCipheriv(
      'aes-256-gcm',
      this.#key,
      segmentNonce(this.#noncePrefix, index, index === this.#count - 1),
    );
    cipher.setAAD(this.header);
    // Body and tag go on as they are: joining them would allocate and copy every segment once more.
    this.push(cipher.update(plaintext));
    cipher.final();
    this.push(cipher.getAuthTag());
  }
}

export function createEncryptStream(options: EncryptOptions): EncryptStream {
  return new EncryptStream(options);
}

// ---------------------------------------------------------------------------
// Decryption

export type DecryptOptions = {
  key: Buffer;
  /**
   * When given, segment lengths and the last segment's position are known, so
   * the stream ends exactly where it must. Required with `take`.
   */
  plaintextSize?: number;
  /** The index of the first segment in the input (a Range download); needs `header`. */
  firstSegment?: number;
  skip?: number;
  take?: number;
  /** The blob's 16 header bytes, when the input does not start with them. */
  header?: Buffer;
};

export class DecryptStream extends Transform {
  readonly #key: KeyObject;
  readonly #plaintextSize: number | undefined;
  readonly #firstSegment: number;
  readonly #skip: number;
  readonly #take: number | undefined;
  #header: SegmentedHeader | undefined;
  #headerBuffer: Buffer | undefined;
  #headerFilled = 0;
  // Known only with plaintextSize: the blob's segment count and the index where this input ends.
  #count: number | undefined;
  #lastIndex: number | undefined;
  #remaining: number | undefined;
  #index: number;
  #pending: Buffer | undefined;
  #filled = 0;
  #done = false;
  // The last segment's plaintext, released only once the input has ended there: bytes appended to
  // a blob fail it before its end leaves, so an extended blob never reads as complete either.
  #held: Buffer | undefined;

  constructor(options: DecryptOptions) {
    super();
    checkKey(options.key);
    if (options.plaintextSize !== undefined) checkCount(options.plaintextSize, 'plaintextSize');
    this.#firstSegment = options.firstSegment ?? 0;
    this.#skip = options.skip ?? 0;
    checkCount(this.#firstSegment, 'firstSegment');
    checkCount(this.#skip, 'skip');
    if (options.take !== undefined) {
      checkCount(options.take, 'take');
      if (options.plaintextSize === undefined) throw new TypeError('take needs plaintextSize');
    }
    if (this.#firstSegment > 0 && !options.header) throw new TypeError('firstSegment > 0 needs the header');
    this.#key = createSecretKey(options.key);
    this.#plaintextSize = options.plaintextSize;
    this.#take = options.take;
    this.#remaining = options.take;
    this.#index = this.#firstSegment;
    if (options.header) this.#start(parseHeader(options.header));
    else this.#headerBuffer = Buffer.alloc(HEADER_SIZE);
  }

  /** The blob's header, once read. */
  get header(): SegmentedHeader | undefined {
    return this.#header;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    try {
      this.#consume(chunk);
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    try {
      if (!this.#header) throw new IntegrityError('Truncated header');
      if (this.#lastIndex === undefined) {
        // Without a declared size, the end of the input is what marks the last segment.
        this.#open(this.#pending?.subarray(0, this.#filled) ?? Buffer.alloc(0), true);
      } else if (!this.#done) {
        throw new IntegrityError(`Truncated blob: it ends inside segment ${this.#index}`, this.#index);
      }
      if (this.#held) this.push(this.#held);
      this.#held = undefined;
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  #start(header: SegmentedHeader): void {
    this.#header = header;
    const size = header.segmentSize;
    if (this.#plaintextSize === undefined) {
      if (this.#skip >= size) throw new RangeError(`skip ${this.#skip} is not within a segment`);
      return;
    }
    this.#count = segmentCount(this.#plaintextSize, size);
    if (this.#firstSegment >= this.#count) throw new RangeError(`firstSegment ${this.#firstSegment} is past the end`);
    const start = this.#firstSegment * size + this.#skip;
    const firstLength = Math.min(size, this.#plaintextSize - this.#firstSegment * size);
    if (this.#skip > 0 && this.#skip >= firstLength) throw new RangeError(`skip ${this.#skip} is past the end`);
    if (this.#take === undefined) {
      this.#lastIndex = this.#count - 1;
    } else {
      if (start + this.#take > this.#plaintextSize) throw new RangeError('skip + take is past the end');
      this.#lastIndex = this.#take === 0 ? this.#firstSegment : Math.floor((start + this.#take - 1) / size);
    }
  }

  #consume(chunk: Buffer): void {
    let offset = 0;
    if (!this.#header) {
      const buffer = this.#headerBuffer as Buffer;
      offset = Math.min(HEADER_SIZE - this.#headerFilled, chunk.length);
      chunk.copy(buffer, this.#headerFilled, 0, offset);
      this.#headerFilled += offset;
      if (this.#headerFilled < HEADER_SIZE) return;
      this.#start(parseHeader(buffer));
    }
    const header = this.#header as SegmentedHeader;
    const full = header.segmentSize + TAG_SIZE;
    while (offset < chunk.length) {
      if (this.#done) throw new IntegrityError('Trailing bytes after the last segment', this.#index);
      const exact = this.#expectedLength(header.segmentSize);
      if (exact !== undefined) {
        if (this.#filled === 0 && chunk.length - offset >= exact) {
          this.#open(chunk.subarray(offset, offset + exact), this.#index === (this.#count as number) - 1);
          offset += exact;
          continue;
        }
      } else if (this.#filled === full) {
        // More input follows, so the buffered full-size segment is not the last.
        this.#open(this.#pending as Buffer, false);
        this.#filled = 0;
        continue;
      } else if (this.#filled === 0 && chunk.length - offset > full) {
        this.#open(chunk.subarray(offset, offset + full), false);
        offset += full;
        continue;
      }
      const target = exact ?? full;
      this.#pending ??= Buffer.allocUnsafe(full);
      const n = Math.min(target - this.#filled, chunk.length - offset);
      chunk.copy(this.#pending, this.#filled, offset, offset + n);
      this.#filled += n;
      offset += n;
      if (exact !== undefined && this.#filled === exact) {
        this.#filled = 0;
        this.#open(this.#pending.subarray(0, exact), this.#index === (this.#count as number) - 1);
      }
    }
  }

  /** The current segment's blob length when the plaintext size is known. */
  #expectedLength(segmentSize: number): number | undefined {
    if (this.#plaintextSize === undefined) return undefined;
    return Math.min(segmentSize, this.#plaintextSize - this.#index * segmentSize) + TAG_SIZE;
  }

  #open(segment: Buffer, final: boolean): void {
    const header = this.#header as SegmentedHeader;
    const index = this.#index;
    if (segment.length < TAG_SIZE) throw new IntegrityError(`Truncated blob: segment ${index} is incomplete`, index);
    if (index >= MAX_SEGMENTS) throw new IntegrityError('Too many segments', index);
    // An empty last segment is only ever written for an empty plaintext; elsewhere it is an extension.
    if (final && segment.length === TAG_SIZE && index > 0) {
      throw new IntegrityError(`Empty last segment at index ${index}`, index);
    }
    const decipher = createDecipheriv('aes-256-gcm', this.#key, segmentNonce(header.noncePrefix, index, final));
    decipher.setAAD(header.bytes);
    decipher.setAuthTag(segment.subarray(segment.length - TAG_SIZE));
    let plaintext: Buffer;
    try {
      // Held back until final() has checked the tag: unverified bytes never leave.
      plaintext = decipher.update(segment.subarray(0, segment.length - TAG_SIZE));
      decipher.final();
    } catch {
      throw new IntegrityError(`Segment ${index} failed authentication`, index);
    }
    this.#index++;
    if (index === this.#lastIndex) this.#done = true;
    this.#emit(index, plaintext);
  }

  #emit(index: number, plaintext: Buffer): void {
    const start = index === this.#firstSegment ? this.#skip : 0;
    if (start > 0 && start >= plaintext.length) throw new RangeError(`skip ${start} is past the end`);
    let end = plaintext.length;
    if (this.#remaining !== undefined) {
      end = Math.min(end, start + this.#remaining);
      this.#remaining -= end - start;
    }
    if (end <= start) return;
    if (index === this.#lastIndex) this.#held = plaintext.subarray(start, end);
    else this.push(plaintext.subarray(start, end));
  }
}

export function createDecryptStream(options: DecryptOptions): DecryptStream {
  return new DecryptStream(options);
}

// ---------------------------------------------------------------------------

function segmentNonce(noncePrefix: Buffer, index: number, final: boolean): Buffer {
  const nonce = Buffer.alloc(12);
  noncePrefix.copy(nonce, 0);
  nonce.writeUInt32BE(index, NONCE_PREFIX_SIZE);
  nonce[11] = final ? 1 : 0;
  return nonce;
}

function checkKey(key: Buffer): void {
  if (!(key instanceof Uint8Array) || key.length !== KEY_SIZE) throw new TypeError('key must be 32 bytes');
}

function checkSegmentSize(segmentSize: number): void {
  if (!Number.isInteger(segmentSize) || segmentSize < MIN_SEGMENT_SIZE || segmentSize > MAX_SEGMENT_SIZE) {
    throw new RangeError(`segmentSize must be an integer in ${MIN_SEGMENT_SIZE}..${MAX_SEGMENT_SIZE}`);
  }
}

function checkCount(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer`);
}
