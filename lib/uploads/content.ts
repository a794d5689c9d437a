import { pipeline, type Readable, Transform, type TransformCallback } from 'node:stream';
import { type Keyring, unwrapDataKey } from '../crypto/key-wrap.ts';
import {
  createDecryptStream,
  createHeader,
  IntegrityError,
  plaintextRangeToBlobRange,
} from '../crypto/segmented-aead.ts';
import { type StoredFile, storedFileKeyAad } from '../db/queries/stored-files.ts';
import { DomainError } from '../errors.ts';
import { contentIntegrityFailures } from '../observability/metrics.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import type { EncryptionMode } from '../vocabulary.ts';
import { SEGMENT_SIZE } from './parts.ts';

export type ContentDeps = { objects: ObjectStore; keyring: Keyring };

export class ContentDestroyedError extends Error {}

/**
 * A file's content as the recipient receives it, for a byte range (inclusive)
 * or the whole file. Server mode: only the segments covering the range are
 * fetched and decrypted, each verified before any of its bytes are emitted, and
 * the answer waits for the first verified bytes, so that a blob whose header or
 * first segment was altered is refused (IntegrityError) before a response starts;
 * damage further on errors the stream, which cuts the response before its end.
 * E2E mode: the stored blob as is (the client decrypts), cut short with an
 * IntegrityError if the store holds more or fewer bytes than the file has.
 */
export async function openContent(
  deps: ContentDeps,
  file: StoredFile,
  mode: EncryptionMode,
  range?: { start: number; end: number },
): Promise<Readable> {
  if (mode === 'e2e') {
    const expected = range ? range.end - range.start + 1 : file.size;
    const blob = range
      ? await readRange(deps.objects, file.object_key, range)
      : await deps.objects.readSized(file.object_key);
    // The store's answer is as long as it says or fails (object-store.ts, readSized): when that is
    // the file's length, the bytes go on as they come, with no count of ours on every chunk.
    if (blob.length === expected) return blob.body;
    return joined(blob.body, exactLength(expected));
  }
  if (!file.data_key_wrapped || !file.nonce_prefix) throw new ContentDestroyedError(`file ${file.id} has no key`);
  const key = unwrapDataKey(deps.keyring, file.data_key_wrapped, storedFileKeyAad(file.id));
  if (!range) {
    const blob = await deps.objects.read(file.object_key);
    return firstVerified(joined(blob, createDecryptStream({ key, plaintextSize: file.size })));
  }
  const plan = plaintextRangeToBlobRange(range.start, range.end, file.size, SEGMENT_SIZE);
  const { body: blob } = await readRange(deps.objects, file.object_key, { start: plan.blobStart, end: plan.blobEnd });
  const header = createHeader(SEGMENT_SIZE, file.nonce_prefix);
  return firstVerified(
    joined(
      blob,
      createDecryptStream({
        key,
        plaintextSize: file.size,
        header,
        firstSegment: plan.firstSegment,
        skip: plan.skip,
        take: plan.take,
      }),
    ),
  );
}

/**
 * openContent for a download: a file whose stored start fails authentication is refused with
 * contentCorruptError (410), before a response starts.
 */
export async function openForDownload(
  deps: ContentDeps,
  file: StoredFile,
  mode: EncryptionMode,
  range?: { start: number; end: number },
): Promise<Readable> {
  try {
    return await openContent(deps, file, mode, range);
  } catch (error) {
    if (error instanceof IntegrityError) throw contentCorruptError();
    throw error;
  }
}

/**
 * The refusal of a download whose stored bytes fail authentication before any is sent: the file
 * is not what was uploaded (changed in storage), and never will be again, so retrying is no use.
 */
export function contentCorruptError(): DomainError {
  return new DomainError(
    'not_found',
    "This file's stored content fails its integrity check (it was altered in storage), so it is not served. The sender must upload it again.",
    { kind: 'gone', details: { reason: 'content_corrupt' } },
  );
}

/** blob → check, where a failure on either side destroys both and reaches the reader. */
function joined(source: Readable, check: NodeJS.ReadWriteStream & Readable): Readable {
  check.once('error', (error) => {
    if (error instanceof IntegrityError) contentIntegrityFailures.inc();
  });
  return pipeline(source, check, () => {});
}

/**
 * Resolves with `content` once its first verified bytes are at hand, or it has ended; rejects with
 * its error when it fails first. The stream is left paused with those bytes, for whoever pipes it.
 */
function firstVerified(content: Readable): Promise<Readable> {
  return new Promise((resolve, reject) => {
    const settle = (error?: Error | null) => {
      content.off('readable', onReadable);
      content.off('error', settle);
      if (error) reject(error);
      else resolve(content);
    };
    // Settled once the tick that brought them is over: a failure that came with them (emitted just
    // after) is still a refusal, rather than a response cut off as soon as it starts.
    const onReadable = () => {
      content.off('readable', onReadable);
      setImmediate(() => settle(content.errored));
    };
    content.on('readable', onReadable);
    content.on('error', settle);
  });
}

/**
 * A range of the stored blob. A blob truncated before `range.start` has no such bytes, and S3
 * answers 416: that is the blob's damage, not the request's.
 */
async function readRange(objects: ObjectStore, key: string, range: { start: number; end: number }) {
  try {
    return await objects.readSized(key, range);
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 416) {
      contentIntegrityFailures.inc();
      throw new IntegrityError(`Truncated blob: it ends before byte ${range.start}`);
    }
    throw error;
  }
}

/** Passes exactly `expected` bytes through, and fails when the input holds more or fewer. */
function exactLength(expected: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      seen += chunk.length;
      if (seen > expected) callback(new IntegrityError(`The stored object is longer than its ${expected} bytes`));
      else callback(null, chunk);
    },
    flush(callback: TransformCallback) {
      if (seen < expected)
        callback(new IntegrityError(`The stored object ends after ${seen} of its ${expected} bytes`));
      else callback();
    },
  });
}
