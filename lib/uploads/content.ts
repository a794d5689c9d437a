import { pipeline, type Readable } from 'node:stream';
import { type Keyring, unwrapDataKey } from '../crypto/key-wrap.ts';
import { createDecryptStream, createHeader, plaintextRangeToBlobRange } from '../crypto/segmented-aead.ts';
import type { StoredFile } from '../db/queries/stored-files.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import type { EncryptionMode } from '../vocabulary.ts';
import { SEGMENT_SIZE } from './parts.ts';

export type ContentDeps = { objects: ObjectStore; keyring: Keyring };

export class ContentDestroyedError extends Error {}

/**
 * A file's content as the recipient receives it, for a byte range (inclusive)
 * or the whole file. Server mode: only the segments covering the range are
 * fetched and decrypted, each verified before any of its bytes are emitted.
 * E2E mode: the stored blob as is (the client decrypts).
 */
export async function openContent(
  deps: ContentDeps,
  file: StoredFile,
  mode: EncryptionMode,
  range?: { start: number; end: number },
): Promise<Readable> {
  if (mode === 'e2e') return deps.objects.read(file.object_key, range);
  if (!file.data_key_wrapped || !file.nonce_prefix) throw new ContentDestroyedError(`file ${file.id} has no key`);
  const key = unwrapDataKey(deps.keyring, file.data_key_wrapped, file.id);
  if (!range) {
    const blob = await deps.objects.read(file.object_key);
    return joined(blob, createDecryptStream({ key, plaintextSize: file.size }));
  }
  const plan = plaintextRangeToBlobRange(range.start, range.end, file.size, SEGMENT_SIZE);
  const blob = await deps.objects.read(file.object_key, { start: plan.blobStart, end: plan.blobEnd });
  const header = createHeader(SEGMENT_SIZE, file.nonce_prefix);
  return joined(
    blob,
    createDecryptStream({
      key,
      plaintextSize: file.size,
      header,
      firstSegment: plan.firstSegment,
      skip: plan.skip,
      take: plan.take,
    }),
  );
}

/** blob → decrypt, where a failure on either side destroys both and reaches the reader. */
function joined(source: Readable, decrypt: NodeJS.ReadWriteStream & Readable): Readable {
  return pipeline(source, decrypt, () => {});
}
