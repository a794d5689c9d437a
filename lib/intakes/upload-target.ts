import { createIntakeQueries } from '../db/queries/intakes.ts';
import { DomainError } from '../errors.ts';
import type { FamilyUploads } from '../family.ts';
import type { Services } from '../services.ts';
import { type UploadTarget, uploadedFileView } from '../uploads/receive.ts';
import type { UploadAddress } from '../uploads/tokens.ts';

/** An intake file's upload URL: where its bytes go, and whether its document still takes them. */
export async function intakeUploadTarget(services: Services, address: UploadAddress): Promise<UploadTarget> {
  const queries = createIntakeQueries(services.db);
  const [document, file] = await Promise.all([queries.documentById(address.owner), queries.file(address.file)]);
  if (!document || !file || file.document_id !== document.id) throw new DomainError('not_found', 'No such upload URL.');
  const intake = await queries.findById(document.intake_id);
  if (!intake) throw new DomainError('not_found', 'No such upload URL.');
  if (document.status === 'deleted') {
    throw new DomainError('not_found', 'This submission was deleted and accepts no uploads.', { kind: 'gone' });
  }
  const late = document.upload_deadline.getTime() <= Date.now();
  const refusal =
    document.status === 'uploading' && !late
      ? null
      : new DomainError('validation_error', 'This submission no longer accepts uploads.', { kind: 'conflict' });
  return {
    table: 'intake_files',
    // One publishable key starts many submissions, each with its own URLs: they share its slots.
    holder: document.publishable_key_id
      ? `publishable_key:${document.publishable_key_id}`
      : `intake:${document.intake_id}`,
    file,
    mode: intake.encryption_mode === 'e2e_asym' ? 'e2e' : 'server',
    refusal,
    uploaded: (fileId) => services.workflows.intakes.fileUploaded(document.id, fileId),
    present: (stored) => uploadedFileView(stored, stored.id, 'intake_file'),
  };
}

/** The kind this family's upload URLs carry, and their lookup (lib/uploads/resolve.ts). */
export const intakeUploads = { kind: 'intake', target: intakeUploadTarget } satisfies FamilyUploads;
