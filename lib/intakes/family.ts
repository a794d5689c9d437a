import { type Family, STORED_FILE_KEY, type StoredFiles } from '../family.ts';
import { SCAN_STATUSES, UPLOAD_STATES } from '../vocabulary.ts';
import { intakeUploads } from './upload-target.ts';
import {
  INTAKE_CLOSE_REASONS,
  INTAKE_DOCUMENT_STATUSES,
  INTAKE_ENCRYPTION_MODES,
  INTAKE_KEMS,
  INTAKE_SOURCES,
  INTAKE_STATUSES,
  METADATA_POLICIES,
} from './vocabulary.ts';

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
      vocabulary: {
        status: INTAKE_STATUSES,
        closed_reason: INTAKE_CLOSE_REASONS,
        encryption_mode: INTAKE_ENCRYPTION_MODES,
        owner_kem: INTAKE_KEMS,
        metadata_policy: METADATA_POLICIES,
      },
    },
    // What a submitter sends about themselves: their reference and free-form metadata.
    // Submitters are third parties, known only by what they wrote: an address in their metadata.
    intake_documents: {
      scope: { kind: 'tenant' },
      personal: ['client_reference', 'metadata'],
      subjects: { emails: ['metadata'] },
      vocabulary: { status: INTAKE_DOCUMENT_STATUSES, source: INTAKE_SOURCES, kem: INTAKE_KEMS },
    },
    intake_files: {
      scope: { kind: 'child', parent: 'intake_documents', column: 'document_id' },
      personal: [],
      exported: ['name', 'size'],
      vocabulary: { upload_state: UPLOAD_STATES, scan_status: SCAN_STATUSES },
      keyWrapped: STORED_FILE_KEY,
    },
    intake_publishable_keys: { scope: { kind: 'tenant' }, personal: [] },
  },
  storedFiles: [intakeDocumentObjects],
  uploads: intakeUploads,
} satisfies Family;

// The purposes of the family's capability tokens (lib/crypto/signed-token.ts).
declare module '../crypto/signed-token.ts' {
  interface TokenPurposes {
    'intake-download': "an intake document file's download link (lib/intakes/documents.ts)";
  }
}
