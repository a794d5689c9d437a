import type { Config } from '../config.ts';
import type { CollectionRow, MemberRow } from '../db/queries/collections.ts';
import { shareUrl as transferShareUrl } from '../transfers/present.ts';

/** The collection's public page, or null while its link is off. */
export function collectionShareUrl(config: Config, code: string | null): string | null {
  return code === null ? null : `${config.api.publicBaseUrl}/c/${code}`;
}

/** One transfer of a collection as its owner sees it: where it stands, never a password or key. */
export function presentMember(config: Config, member: MemberRow) {
  return {
    id: member.id,
    object: 'collection_transfer' as const,
    position: member.position,
    added_at: member.added_at,
    short_code: member.short_code,
    transfer_title: member.transfer_title || null,
    status: member.status,
    encryption_mode: member.encryption_mode,
    password_protected: member.password_hash !== null,
    expires_at: member.expires_at,
    share_url: transferShareUrl(config, member.short_code),
  };
}

/** A collection as its owner sees it; `members` (in order) only where the answer carries them. */
export function presentCollection(config: Config, row: CollectionRow) {
  return {
    id: row.id,
    object: 'collection' as const,
    title: row.title,
    description: row.description,
    transfer_count: row.transfer_count,
    share_url: collectionShareUrl(config, row.share_code),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function presentCollectionWithTransfers(config: Config, row: CollectionRow, members: readonly MemberRow[]) {
  return { ...presentCollection(config, row), transfers: members.map((member) => presentMember(config, member)) };
}
