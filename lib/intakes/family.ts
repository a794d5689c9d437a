import type { Family, StoredFiles } from '../family.ts';
import { intakeUploads } from './upload-target.ts';

/** The objects of an intake document, and when they must go. */
export const intakeDocumentObjects = {
  owner: 'intake_document',
  ownerTable: 'intake_documents',
  endedStatuses: ['deleted', 'rejected'],
  // A rejected one has no end time: it was rejected right after its upload.
  endedAt: ['deleted_at', 'received_at', 'created_at'],
  filesTable: 'intake_files',
  ownerColumn: 'document_id',
} satisfies StoredFiles;

export const intakesFamily = {
  name: 'intakes',
  openapi: {
    tag: 'intakes',
    description:
      'Secure intakes: receiving documents from third parties, through a publishable key and the intake page.',
  },
  tables: {
    intakes: {
      scope: { kind: 'tenant' },
      personal: ['notify_emails'],
      subjects: { userIds: ['user_id'], emails: ['notify_emails'] },
    },
    // What a submitter sends about themselves: their reference and free-form metadata.
    // Submitters are third parties, known only by what they wrote: an address in their metadata.
    intake_documents: {
      scope: { kind: 'tenant' },
      personal: ['client_reference', 'metadata'],
      subjects: { emails: ['metadata'] },
    },
    intake_files: {
      scope: { kind: 'child', parent: 'intake_documents', column: 'document_id' },
      personal: [],
      exported: ['name', 'size'],
    },
    intake_publishable_keys: { scope: { kind: 'tenant' }, personal: [] },
  },
  storedFiles: [intakeDocumentObjects],
  uploads: intakeUploads,
} satisfies Family;
