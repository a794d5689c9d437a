import { ValiseError } from '../errors.ts';

// The VAL1 segmented AES-256-GCM format of docs/encryption.md, with WebCrypto
// and web streams so it runs in browsers and Node alike. Memory stays at about
// one segment whatever the file size.

export const HEADER_SIZE = 16;
export const TAG_SIZE = 16;
export const NONCE_PREFIX_SIZE = 7;
export const KEY_SIZE = 32;
/** The segment size Valise writes (64 KiB). */
export const DEFAULT_SEGMENT_SIZE = 65_536;
const MIN_SEGMENT_SIZE = 4096;
const MAX_SEGMENT_SIZE = 16_777_216;
const MAGIC = [0x56, 0x41, 0x4c, 0x31]; // "VAL1"

export function segmentCount(plaintextSize: number, segmentSize: number): number {
  return plaintextSize === 0 ? 1 : Math.ceil(plaintextSize / segmentSize);
}

export function encryptedSize(plaintextSize: number, segmentSize = DEFAULT_SEGMENT_SIZE): number {
  return HEADER_SIZE + plaintextSize + TAG_SIZE * segmentCount(plaintextSize, segmentSize);
}

/** The plaintext size of a canonical blob of `blobSize` bytes, or null when no such blob exists. */
export function decryptedSize(blobSize: number, segmentSize: number): number | null {
  const body = blobSize - HEADER_SIZE;
  if (body < TAG_SIZE) return null;
  const q = Math.floor(body / (segmentSize + TAG_SIZE));
  const r = body % (segmentSize + TAG_SIZE);
  if ((r > 0 && r < TAG_SIZE) || (r === TAG_SIZE && q > 0)) return null;
  return q * segmentSize + (r === 0 ? 0 : r - TAG_SIZE);
}

export function makeHeader(segmentSize: number, noncePrefix: Uint8Array): Uint8Array<ArrayBuffer> {
  if (noncePrefix.length !== NONCE_PREFIX_SIZE) throw new TypeError('the nonce prefix is 7 bytes');
  const header = new Uint8Array(HEADER_SIZE);
  header.set(MAGIC, 0);
  new DataView(header.buffer).setUint32(4, segmentSize, false);
  header.set(noncePrefix, 8); // header[15] stays 0
  return header;
}

export function parseHeader(header: Uint8Array): { segmentSize: number; noncePrefix: Uint8Array<ArrayBuffer> } {
  if (header.length < HEADER_SIZE) throw integrityError('the blob is shorter than its header');
  const view = new DataView(header.buffer, header.byteOffset, HEADER_SIZE);
  const segmentSize = view.getUint32(4, false);
  const magicOk = MAGIC.every((byte, i) => header[i] === byte);
  if (!magicOk || segmentSize < MIN_SEGMENT_SIZE || segmentSize > MAX_SEGMENT_SIZE || header[15] !== 0) {
    throw integrityError('not a VAL1 blob');
  }
  return { segmentSize, noncePrefix: header.slice(8, 15) };
}

function nonce(prefix: Uint8Array, index: number, final: boolean): Uint8Array<ArrayBuffer> {
  const iv = new Uint8Array(12);
  iv.set(prefix, 0);
  new DataView(iv.buffer).setUint32(7, index, false);
  iv[11] = final ? 1 : 0;
  return iv;
}

function importKey(rawKey: Uint8Array<ArrayBuffer>, usage: 'encrypt' | 'decrypt'): Promise<CryptoKey> {
  if (rawKey.length !== KEY_SIZE) throw new TypeError('a VAL1 key is 32 bytes');
  return globalThis.crypto.subtle.importKey('raw', rawKey, 'AES-GCM', false, [usage]);
}

function integrityError(message: string, cause?: unknown): ValiseError {
  return new ValiseError({
    code: 'integrity_error',
    message: `${message}: the file is damaged or the key is wrong`,
    cause,
  });
}

export type EncryptOptions = {
  key: Uint8Array<ArrayBuffer>;
  noncePrefix: Uint8Array<ArrayBuffer>;
  /** The whole file's plaintext size: it fixes which segment is final. */
  plaintextSize: number;
  segmentSize?: number;
  /**
   * Resume from this segment: the input starts at plaintext byte `firstSegment · S`, and the output
   * at that segment's first blob byte (no header unless 0). Same key, prefix and plaintext only.
   */
  firstSegment?: number;
};

/** Plaintext in, VAL1 blob out. Errors when the input is not exactly the declared size. */
export function createEncryptStream(options: EncryptOptions): TransformStream<Uint8Array, Uint8Array> {
  const S = options.segmentSize ?? DEFAULT_SEGMENT_SIZE;
  const header = makeHeader(S, options.noncePrefix);
  const total = segmentCount(options.plaintextSize, S);
  let index = options.firstSegment ?? 0;
  const lengthOf = (i: number) => Math.min(S, options.plaintextSize - i * S);
  const keyPromise = importKey(options.key, 'encrypt');
  let buffer = new Uint8Array(Math.max(0, lengthOf(index)));
  let filled = 0;

  const seal = async (controller: TransformStreamDefaultController<Uint8Array>) => {
    const iv = nonce(options.noncePrefix, index, index === total - 1);
    const sealed = await globalThis.crypto.subtle.encrypt(
      { name: 'AES-GCM', iv, additionalData: header },
      await keyPromise,
      buffer,
    );
    controller.enqueue(new Uint8Array(sealed));
    index++;
    buffer = new Uint8Array(index < total ? lengthOf(index) : 0);
    filled = 0;
  };

  return new TransformStream({
    start(controller) {
      if (index === 0) controller.enqueue(header.slice());
    },
    async transform(chunk, controller) {
      let offset = 0;
      while (offset < chunk.length) {
        if (index >= total) throw new RangeError(`more than the declared ${options.plaintextSize} bytes`);
        const take = Math.min(buffer.length - filled, chunk.length - offset);
        buffer.set(chunk.subarray(offset, offset + take), filled);
        filled += take;
        offset += take;
        if (filled === buffer.length) await seal(controller);
      }
    },
    async flush(controller) {
      // An empty file is one empty final segment.
      if (options.plaintextSize === 0 && index === 0) await seal(controller);
      if (index !== total || filled !== 0)
        throw new RangeError(`fewer than the declared ${options.plaintextSize} bytes`);
    },
  });
}

/**
 * VAL1 blob in, plaintext out, for a blob of known size. Each segment's tag is checked before any
 * of its bytes go out; a bad tag, a wrong length or a trailing byte errors with `integrity_error`.
 */
export function createDecryptStream(options: {
  key: Uint8Array<ArrayBuffer>;
  blobSize: number;
}): TransformStream<Uint8Array, Uint8Array> {
  const keyPromise = importKey(options.key, 'decrypt');
  const header = new Uint8Array(HEADER_SIZE);
  let headerFilled = 0;
  let layout: { S: number; prefix: Uint8Array; total: number; plaintextSize: number } | undefined;
  let index = 0;
  let segment = new Uint8Array(0);
  let filled = 0;

  const segmentLength = (i: number) => {
    if (!layout) throw new Error('no header yet');
    return Math.min(layout.S, layout.plaintextSize - i * layout.S) + TAG_SIZE;
  };

  const open = async (controller: TransformStreamDefaultController<Uint8Array>) => {
    if (!layout) throw new Error('no header yet');
    const iv = nonce(layout.prefix, index, index === layout.total - 1);
    let plain: ArrayBuffer;
    try {
      plain = await globalThis.crypto.subtle.decrypt(
        { name: 'AES-GCM', iv, additionalData: header },
        await keyPromise,
        segment,
      );
    } catch (cause) {
      throw integrityError(`segment ${index} does not authenticate`, cause);
    }
    if (plain.byteLength > 0) controller.enqueue(new Uint8Array(plain));
    index++;
    segment = new Uint8Array(index < layout.total ? segmentLength(index) : 0);
    filled = 0;
  };

  return new TransformStream({
    async transform(chunk, controller) {
      let offset = 0;
      if (!layout) {
        const take = Math.min(HEADER_SIZE - headerFilled, chunk.length);
        header.set(chunk.subarray(0, take), headerFilled);
        headerFilled += take;
        offset = take;
        if (headerFilled < HEADER_SIZE) return;
        const { segmentSize, noncePrefix } = parseHeader(header);
        const plaintextSize = decryptedSize(options.blobSize, segmentSize);
        if (plaintextSize === null) throw integrityError(`no VAL1 blob is ${options.blobSize} bytes long`);
        layout = {
          S: segmentSize,
          prefix: noncePrefix,
          total: segmentCount(plaintextSize, segmentSize),
          plaintextSize,
        };
        segment = new Uint8Array(segmentLength(0));
      }
      while (offset < chunk.length) {
        if (index >= layout.total) throw integrityError('trailing bytes after the final segment');
        const take = Math.min(segment.length - filled, chunk.length - offset);
        segment.set(chunk.subarray(offset, offset + take), filled);
        filled += take;
        offset += take;
        if (filled === segment.length) await open(controller);
      }
    },
    flush() {
      if (!layout || index !== layout.total) throw integrityError('the blob is truncated');
    },
  });
}

export function generateKey(): Uint8Array<ArrayBuffer> {
  return globalThis.crypto.getRandomValues(new Uint8Array(KEY_SIZE));
}

export function generateNoncePrefix(): Uint8Array<ArrayBuffer> {
  return globalThis.crypto.getRandomValues(new Uint8Array(NONCE_PREFIX_SIZE));
}
