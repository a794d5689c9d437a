import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { createDecryptStream, createEncryptStream } from '../crypto/segmented-aead.ts';
import type { ObjectStore } from '../storage/object-store.ts';

// An export's objects, sealed like the files Valise stores (AES-256-GCM segments,
// lib/crypto/segmented-aead.ts) under the export's own data key: an export is small JSON, written
// and read whole.

/** Seals `plaintext` and stores it under `key` (one part); its size in the store. */
export async function putSealed(
  objects: ObjectStore,
  key: string,
  dataKey: Buffer,
  plaintext: Buffer,
): Promise<number> {
  const sealed = await buffer(
    Readable.from([plaintext]).pipe(createEncryptStream({ key: dataKey, plaintextSize: plaintext.length })),
  );
  const uploadId = await objects.startMultipart(key);
  try {
    const etag = await objects.uploadPart(key, uploadId, 1, sealed, sealed.length);
    await objects.completeMultipart(key, uploadId, [{ partNumber: 1, etag }]);
  } catch (error) {
    await objects.abortMultipart(key, uploadId);
    throw error;
  }
  return sealed.length;
}

/** Reads and opens what putSealed stored; every segment's tag is checked. */
export async function getSealed(objects: ObjectStore, key: string, dataKey: Buffer): Promise<Buffer> {
  const stream = await objects.read(key);
  return buffer(stream.pipe(createDecryptStream({ key: dataKey })));
}
