import type { StoredFile } from '../db/queries/stored-files.ts';
import { inParallel } from '../in-parallel.ts';
import type { ObjectStore } from './object-store.ts';

/** Removes a stored file's blob and any unfinished multipart upload; missing objects are fine. */
export async function removeBlob(objects: ObjectStore, file: StoredFile): Promise<void> {
  if (file.multipart_upload_id) await objects.abortMultipart(file.object_key, file.multipart_upload_id);
  await objects.remove(file.object_key);
}

/** S3's most keys per DeleteObjects request. */
const KEYS_PER_REQUEST = 1_000;

/**
 * Removes many stored files' blobs as `removeBlob` does each, in requests of up to 1,000 keys
 * (a purge's batch), after aborting their unfinished multipart uploads.
 */
export async function removeBlobs(objects: ObjectStore, files: readonly StoredFile[]): Promise<void> {
  await inParallel(
    files.filter((file) => file.multipart_upload_id),
    8,
    async (file) => objects.abortMultipart(file.object_key, file.multipart_upload_id ?? ''),
  );
  for (let i = 0; i < files.length; i += KEYS_PER_REQUEST) {
    await objects.removeMany(files.slice(i, i + KEYS_PER_REQUEST).map((file) => file.object_key));
  }
}
