import type { AccessLogRow, CoffreRow, ItemRow, MemberRow } from '../db/queries/coffres.ts';
import { itemIdOf } from './ids.ts';

// Vaults, members, items and access-log entries as the API answers them (docs/coffres.md).

export function presentCoffre(row: CoffreRow) {
  return {
    id: row.id,
    object: 'coffre' as const,
    name: row.name,
    description: row.description,
    status: row.status,
    expires_at: row.expires_at,
    member_count: row.member_count,
    item_count: row.item_count,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function invitationUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/v/${token}`;
}

export function presentMember(row: MemberRow) {
  return {
    id: row.id,
    object: 'coffre_member' as const,
    coffre_id: row.coffre_id,
    email: row.email,
    name: row.name,
    access: row.access,
    status: row.revoked_at ? ('revoked' as const) : ('active' as const),
    invited_at: row.invited_at,
    invitation_expires_at: row.invitation_expires_at,
    revoked_at: row.revoked_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export type DownloadLink = { url: string; expiresIn: number };

export function presentItem(row: ItemRow, link: DownloadLink | null = null) {
  return {
    id: itemIdOf(row.id),
    object: 'coffre_item' as const,
    coffre_id: row.coffre_id,
    name: row.name,
    size: row.size,
    mime_type: row.mime_type,
    status: row.status,
    upload_state: row.upload_state,
    bytes_received: row.bytes_received,
    sha256: row.sha256,
    scan_status: row.scan_status,
    uploaded_by: row.uploaded_by_member_id
      ? { type: 'member' as const, member_id: row.uploaded_by_member_id }
      : { type: 'api_key' as const, member_id: null },
    created_at: row.created_at,
    uploaded_at: row.uploaded_at,
    deleted_at: row.deleted_at,
    download_url: link?.url ?? null,
    download_expires_in: link?.expiresIn ?? null,
  };
}

export function presentAccess(row: AccessLogRow) {
  return {
    id: row.id,
    object: 'coffre_access' as const,
    actor_type: row.actor_type,
    actor: row.actor,
    member_id: row.member_id,
    action: row.action,
    item_id: row.item_id ? itemIdOf(row.item_id) : null,
    item_name: row.item_name,
    ip_address: row.ip_address,
    created_at: row.created_at,
  };
}
