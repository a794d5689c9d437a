import { type Family, NETWORK_IDENTITY, STORED_FILE_KEY, type StoredFiles } from '../family.ts';
import {
  APPROVAL_DECISIONS,
  APPROVAL_STATUSES,
  ENCRYPTION_MODES,
  SCAN_STATUSES,
  TRANSFER_STATUSES,
  UPLOAD_STATES,
} from '../vocabulary.ts';
import { transferUploads } from './upload-target.ts';

/** The objects of a transfer, and when they must go. */
export const transferObjects = {
  owner: 'transfer',
  ownerTable: 'transfers',
  endedStatuses: ['expired', 'deleted'],
  endedAt: ['ended_at'],
  filesTable: 'transfer_files',
  ownerColumn: 'transfer_id',
} satisfies StoredFiles;

export const transfersFamily = {
  name: 'transfers',
  openapi: { tag: 'transfers', description: 'Transfers: files shared by link, their lifecycle and approval.' },
  tables: {
    transfers: {
      scope: { kind: 'tenant' },
      personal: ['recipient', 'approval_note'],
      subjects: { userIds: ['user_id', 'approved_by'], emails: ['recipient'] },
      exported: ['transfer_title', 'status', 'expires_at'],
      vocabulary: {
        status: TRANSFER_STATUSES,
        encryption_mode: ENCRYPTION_MODES,
        approval_status: APPROVAL_STATUSES,
        scan_status: SCAN_STATUSES,
      },
    },
    transfer_files: {
      scope: { kind: 'child', parent: 'transfers', column: 'transfer_id' },
      personal: [],
      exported: ['name', 'size', 'mime_type'],
      vocabulary: { upload_state: UPLOAD_STATES, scan_status: SCAN_STATUSES },
      keyWrapped: STORED_FILE_KEY,
    },
    transfer_approvals: {
      scope: { kind: 'child', parent: 'transfers', column: 'transfer_id' },
      personal: ['note'],
      subjects: { userIds: ['approver_id'] },
      vocabulary: { decision: APPROVAL_DECISIONS },
    },
    transfer_downloads: {
      scope: { kind: 'child', parent: 'transfers', column: 'transfer_id' },
      personal: NETWORK_IDENTITY,
      unattributed: 'Anyone holding the share link downloads anonymously: nothing ties a download to a person.',
    },
    // client_key is the guessing address's bucket.
    share_password_attempts: {
      scope: { kind: 'child', parent: 'transfers', column: 'transfer_id' },
      personal: ['client_key'],
      unattributed: 'A bucket of password guesses by network address, kept for an hour, naming nobody.',
    },
    download_link_uses: { scope: { kind: 'child', parent: 'transfer_files', column: 'file_id' }, personal: [] },
  },
  storedFiles: [transferObjects],
  uploads: transferUploads,
} satisfies Family;

// The purposes of the family's capability tokens (lib/crypto/signed-token.ts).
declare module '../crypto/signed-token.ts' {
  interface TokenPurposes {
    download: "a transfer file's download link (lib/transfers/download-links.ts)";
    unlock: 'a password-protected share, unlocked (lib/transfers/share-passwords.ts)';
  }
}
