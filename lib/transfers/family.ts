import { type Family, NETWORK_IDENTITY, type StoredFiles } from '../family.ts';
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
    },
    transfer_files: {
      scope: { kind: 'child', parent: 'transfers', column: 'transfer_id' },
      personal: [],
      exported: ['name', 'size', 'mime_type'],
    },
    transfer_approvals: {
      scope: { kind: 'child', parent: 'transfers', column: 'transfer_id' },
      personal: ['note'],
      subjects: { userIds: ['approver_id'] },
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
