import { randomId } from '../intakes/ids.ts';

// Vault ids: `cof_…` vaults and `cofm_…` members, random like intake ids;
// `cofi_…` items, whose stored-file id must be a uuid (lib/uploads/ reads
// every file table by uuid), so the public id is that uuid's 32 hex digits.

export const COFFRE_ID_PATTERN = /^cof_[0-9a-v]{26}$/;
export const MEMBER_ID_PATTERN = /^cofm_[0-9a-v]{26}$/;
export const ITEM_ID_PATTERN = /^cofi_[0-9a-f]{32}$/;

export const newCoffreId = () => `cof_${randomId()}`;
export const newMemberId = () => `cofm_${randomId()}`;

export const itemIdOf = (uuid: string) => `cofi_${uuid.replaceAll('-', '')}`;

/** The stored file's uuid behind a `cofi_…` id, or null when it is not one. */
export function itemUuidOf(itemId: string): string | null {
  if (!ITEM_ID_PATTERN.test(itemId)) return null;
  const hex = itemId.slice(5);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The kind a vault item's upload URL carries (lib/uploads/tokens.ts). */
export const COFFRE_UPLOAD_KIND = 'coffre';
