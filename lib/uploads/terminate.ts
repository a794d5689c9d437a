import { randomUUID } from 'node:crypto';
import { createUploadQueries } from '../db/queries/uploads.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import { type UploadTarget, uploadInProgressError } from './receive.ts';
import { metadataFile } from './tus.ts';

/**
 * tus `termination`: what was sent of an unfinished file is let go (its multipart upload aborted,
 * its committed parts and offset forgotten); the file stays declared, so its upload URL can start
 * again from zero. A finished file is its owner's to delete (a transfer's DELETE), not the upload
 * URL's: 409. A file another request is sending now: 409, as for a PUT.
 */
export async function terminateUpload(services: Services, target: UploadTarget): Promise<void> {
  const { file } = target;
  if (file.upload_state === 'uploaded') {
    throw new DomainError(
      'validation_error',
      'This file is uploaded: it is deleted with its transfer, intake document or vault item.',
      { kind: 'conflict' },
    );
  }
  if (target.refusal) throw target.refusal;
  const uploads = createUploadQueries(services.db, target.table, services.config.transfers.uploads.leaseMs);
  const leaseId = randomUUID();
  const leased = await uploads.acquireLease(file.id, leaseId);
  if (!leased) throw uploadInProgressError();
  try {
    if (leased.multipart_upload_id)
      await services.objects.abortMultipart(leased.object_key, leased.multipart_upload_id);
    if (!(await uploads.reset(file.id, leaseId))) throw uploadInProgressError();
  } finally {
    await uploads.releaseLease(file.id, leaseId);
  }
}

/**
 * tus `creation` on an upload URL: the upload it would create is the declared file itself, so the
 * request must describe that file: its `Upload-Length` the declared size, and the name in its
 * `Upload-Metadata` (`filename` or `name`), when it sends one, the declared name. The type is the
 * declared one whatever the metadata says (HEAD answers it in `Upload-Metadata`).
 */
export function checkCreation(target: UploadTarget, length: number, metadata: Map<string, string>): void {
  const { file } = target;
  if (length !== file.size) {
    throw new DomainError(
      'validation_error',
      `This upload URL is for a file of ${file.size} bytes: Upload-Length must be ${file.size}.`,
      { param: 'Upload-Length' },
    );
  }
  const { name } = metadataFile(metadata);
  if (name !== undefined && name !== file.name) {
    throw new DomainError(
      'validation_error',
      `This upload URL is for the file named ${JSON.stringify(file.name)}: use the upload URL of that file.`,
      { param: 'Upload-Metadata' },
    );
  }
}
