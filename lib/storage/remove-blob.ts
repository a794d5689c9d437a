import type { StoredFile } from '../db/queries/stored-files.ts';
import type { ObjectStore } from './object-store.ts';

/** Removes a stored file's blob and any unfinished multipart upload; missing objects are fine. */
export async function removeBlob(objects: ObjectStore, file: StoredFile): Promise<void> {
  if (file.multipart_upload_id) await objects.abortMultipart(file.object_key, file.multipart_upload_id);
  await objects.remove(file.object_key);
}
