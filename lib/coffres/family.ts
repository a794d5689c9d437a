import { type Family, STORED_FILE_KEY, type StoredFiles } from '../family.ts';
import { SCAN_STATUSES, UPLOAD_STATES } from '../vocabulary.ts';
import { coffreUploads } from './upload-target.ts';
import {
  COFFRE_ACCESS_LEVELS,
  COFFRE_ACTIONS,
  COFFRE_ACTOR_TYPES,
  COFFRE_ITEM_STATUSES,
  COFFRE_STATUSES,
} from './vocabulary.ts';

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
    coffres: { scope: { kind: 'tenant' }, personal: [], vocabulary: { status: COFFRE_STATUSES } },
    coffre_members: {
      scope: { kind: 'tenant' },
      personal: ['email', 'name'],
      subjects: { emails: ['email'] },
      vocabulary: { access: COFFRE_ACCESS_LEVELS },
    },
    coffre_items: {
      scope: { kind: 'tenant' },
      personal: [],
      exported: ['name', 'size'],
      vocabulary: { status: COFFRE_ITEM_STATUSES, upload_state: UPLOAD_STATES, scan_status: SCAN_STATUSES },
      keyWrapped: STORED_FILE_KEY,
    },
    // `actor` is the member's e-mail address (or an API key's prefix, which matches no address).
    coffre_access_log: {
      scope: { kind: 'tenant' },
      personal: ['actor', 'ip_address'],
      subjects: { emails: ['actor'] },
      exported: ['action', 'item_name'],
      vocabulary: { actor_type: COFFRE_ACTOR_TYPES, action: COFFRE_ACTIONS },
    },
  },
  storedFiles: [coffreItemObjects],
  uploads: coffreUploads,
} satisfies Family;

// The purposes of the family's capability tokens (lib/crypto/signed-token.ts).
declare module '../crypto/signed-token.ts' {
  interface TokenPurposes {
    'coffre-invitation': "a vault member's invitation link (lib/coffres/members.ts)";
    'coffre-download': "a vault item's download link (lib/coffres/items.ts)";
    'coffre-archive': "a vault's download-all ZIP link (lib/coffres/archive.ts)";
  }
}
