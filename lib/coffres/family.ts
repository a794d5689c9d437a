import type { Family, StoredFiles } from '../family.ts';
import { coffreUploads } from './upload-target.ts';

/** The object of a vault item (the item is its own file), and when it must go. */
export const coffreItemObjects = {
  owner: 'coffre_item',
  ownerTable: 'coffre_items',
  endedStatuses: ['deleted', 'rejected'],
  endedAt: ['deleted_at', 'uploaded_at', 'created_at'],
  filesTable: 'coffre_items',
  ownerColumn: 'id',
} satisfies StoredFiles;

export const coffresFamily = {
  name: 'coffres',
  openapi: {
    tag: 'coffres',
    description: 'Vaults (data rooms): items shared with invited members, their access and their log.',
  },
  tables: {
    coffres: { scope: { kind: 'tenant' }, personal: [] },
    coffre_members: { scope: { kind: 'tenant' }, personal: ['email', 'name'], subjects: { emails: ['email'] } },
    coffre_items: { scope: { kind: 'tenant' }, personal: [], exported: ['name', 'size'] },
    // `actor` is the member's e-mail address (or an API key's prefix, which matches no address).
    coffre_access_log: {
      scope: { kind: 'tenant' },
      personal: ['actor', 'ip_address'],
      subjects: { emails: ['actor'] },
      exported: ['action', 'item_name'],
    },
  },
  storedFiles: [coffreItemObjects],
  uploads: coffreUploads,
} satisfies Family;
