import { createHash, getHashes } from 'node:crypto';
import { Transform } from 'node:stream';
import { DomainError } from '../errors.ts';

// tus 1.0.0 (https://tus.io/protocols/resumable-upload) on every upload URL, as a second way in
// beside PUT: the same file, the same encrypting part writer, the same finalisation. What the
// protocol's headers say is read here; the upload itself is lib/uploads/receive.ts's.
//
// How Valise maps tus: a file is declared when its owner (a transfer, an intake submission, a vault
// item) is created, so the upload URL is the tus upload resource from the start. `creation` is a
// POST to that same URL: it checks the declared length (and name, when the metadata carries one)
// and answers the URL itself as `Location`. A client given the URL as its `endpoint` (Uppy) and one
// given it as its `uploadUrl` (tus-js-client) both end up PATCHing it. Offsets move by whole parts
// (part_size, 8 MiB for files up to 78 GiB): a PATCH's bytes past the last part boundary it reaches
// are read and dropped, and the offset it answers says where to go on (docs/tus.md).

export const TUS_VERSION = '1.0.0';

/** The extensions every upload URL supports, as `Tus-Extension` lists them. */
export const TUS_EXTENSIONS = ['creation', 'creation-with-upload', 'termination', 'checksum', 'expiration'] as const;

/** `Upload-Checksum` algorithms, as tus names them (lowercase, the names Node's crypto knows). */
export const TUS_CHECKSUM_ALGORITHMS = ['sha256', 'sha512', 'sha1', 'md5'].filter((name) => getHashes().includes(name));

/** The content type of a body that carries file bytes at an offset (PATCH, and POST with creation-with-upload). */
export const TUS_CONTENT_TYPE = 'application/offset+octet-stream';

/** Request headers a browser must be allowed to send, and answer headers it must be allowed to read (CORS). */
export const TUS_REQUEST_HEADERS = [
  'Tus-Resumable',
  'Upload-Offset',
  'Upload-Length',
  'Upload-Metadata',
  'Upload-Checksum',
  'Upload-Defer-Length',
  'Upload-Concat',
  'X-HTTP-Method-Override',
  'X-Requested-With',
] as const;
export const TUS_RESPONSE_HEADERS = [
  'Location',
  'Tus-Resumable',
  'Tus-Version',
  'Tus-Extension',
  'Tus-Max-Size',
  'Tus-Checksum-Algorithm',
  'Upload-Offset',
  'Upload-Length',
  'Upload-Metadata',
  'Upload-Expires',
] as const;

/** Refuses a request that speaks another version of tus than ours (412, with `Tus-Version`). */
export function checkTusResumable(header: string | undefined, required: boolean): void {
  if (header === undefined && !required) return;
  if (header?.trim() === TUS_VERSION) return;
  throw new DomainError(
    'validation_error',
    header === undefined
      ? `This is a tus request: send Tus-Resumable: ${TUS_VERSION}.`
      : `tus ${header} is not supported: this server speaks tus ${TUS_VERSION}.`,
    { param: 'Tus-Resumable', kind: 'precondition_failed', details: { tus_version: TUS_VERSION } },
  );
}

/** A non-negative integer header (`Upload-Offset`, `Upload-Length`), or a 400 naming it. */
export function byteCountHeader(name: string, value: string | undefined): number {
  const count = value !== undefined && /^\d{1,16}$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(count)) {
    throw new DomainError('validation_error', `${name} must be a number of bytes.`, { param: name });
  }
  return count;
}

/**
 * `Upload-Metadata`: comma-separated `key base64value` pairs (the value may be absent). Keys are
 * unique; values are decoded as UTF-8.
 */
export function parseUploadMetadata(header: string | undefined): Map<string, string> {
  const metadata = new Map<string, string>();
  if (header === undefined || header.trim() === '') return metadata;
  for (const pair of header.split(',')) {
    const [key, value, extra] = pair.trim().split(' ');
    if (
      !key ||
      extra !== undefined ||
      metadata.has(key) ||
      (value !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(value))
    ) {
      throw new DomainError('validation_error', 'Upload-Metadata must be comma-separated "key base64value" pairs.', {
        param: 'Upload-Metadata',
      });
    }
    metadata.set(key, value === undefined ? '' : Buffer.from(value, 'base64').toString('utf8'));
  }
  return metadata;
}

export function encodeUploadMetadata(entries: Record<string, string>): string {
  return Object.entries(entries)
    .map(([key, value]) => `${key} ${Buffer.from(value, 'utf8').toString('base64')}`)
    .join(',');
}

/** The file's name and type as a tus client sends them: Uppy sends `name` and `type`, others `filename` and `filetype`. */
export function metadataFile(metadata: Map<string, string>): { name?: string; type?: string } {
  return {
    name: metadata.get('filename') ?? metadata.get('name'),
    type: metadata.get('filetype') ?? metadata.get('type'),
  };
}

/** What `Upload-Checksum` says the request's body hashes to. */
export type BodyChecksum = { algorithm: string; digest: Buffer };

export function parseUploadChecksum(header: string | undefined): BodyChecksum | undefined {
  if (header === undefined) return undefined;
  const [algorithm = '', encoded, extra] = header.trim().split(' ');
  if (!TUS_CHECKSUM_ALGORITHMS.includes(algorithm)) {
    throw new DomainError(
      'validation_error',
      `Upload-Checksum: the algorithm must be one of ${TUS_CHECKSUM_ALGORITHMS.join(', ')}.`,
      { param: 'Upload-Checksum' },
    );
  }
  if (!encoded || extra !== undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
    throw new DomainError('validation_error', 'Upload-Checksum must read "<algorithm> <base64 digest>".', {
      param: 'Upload-Checksum',
    });
  }
  return { algorithm, digest: Buffer.from(encoded, 'base64') };
}

/**
 * Hashes the bytes that pass through; `verify` then refuses them (460) unless they match the
 * checksum the client sent. Constant memory: the hash, not the body.
 */
export class ChecksumStage extends Transform {
  private readonly hash;
  private readonly expected: BodyChecksum;

  constructor(expected: BodyChecksum) {
    super();
    this.expected = expected;
    this.hash = createHash(expected.algorithm);
  }

  override _transform(
    chunk: Buffer,
    _encoding: BufferEncoding,
    callback: (error?: Error | null, data?: Buffer) => void,
  ) {
    this.hash.update(chunk);
    callback(null, chunk);
  }

  verify(): void {
    const actual = this.hash.digest();
    // The digest is the client's own claim about its own bytes, not a secret: a plain comparison is enough.
    if (!actual.equals(this.expected.digest)) {
      throw new DomainError(
        'validation_error',
        `The body does not match its Upload-Checksum (${this.expected.algorithm}): none of it was kept. Send it again.`,
        { param: 'Upload-Checksum', kind: 'checksum_mismatch' },
      );
    }
  }
}

/**
 * Passes the first `keep` bytes on and reads the rest without passing it: the bytes of a PATCH
 * past the last part boundary it reaches, which the client sends again from the offset it is told.
 */
export class KeepFirst extends Transform {
  private left: number;

  constructor(keep: number) {
    super();
    this.left = keep;
  }

  override _transform(
    chunk: Buffer,
    _encoding: BufferEncoding,
    callback: (error?: Error | null, data?: Buffer) => void,
  ) {
    if (this.left <= 0) return callback();
    const kept = chunk.length <= this.left ? chunk : chunk.subarray(0, this.left);
    this.left -= kept.length;
    callback(null, kept);
  }
}

/** An HTTP date (RFC 9110 IMF-fixdate), as `Upload-Expires` carries it. */
export function httpDate(date: Date): string {
  return date.toUTCString();
}
