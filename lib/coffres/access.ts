import { constantTimeEqual } from '../crypto/secrets.ts';
import { verifyToken } from '../crypto/signed-token.ts';
import { type CoffreRow, createCoffreQueries, type ItemRow, type MemberRow } from '../db/queries/coffres.ts';
import { createEventQueries } from '../db/queries/events.ts';
import type { RecordOwner } from '../db/queries/idempotency.ts';
import { DomainError } from '../errors.ts';
import { coffreView, memberView } from '../events/coffre-events.ts';
import { countSandboxDownloads, downloadLimitReached } from '../sandbox.ts';
import type { Services } from '../services.ts';
import { itemIdOf, itemUuidOf } from './ids.ts';
import { type Actor, addItem, downloadLink, itemGone, type NewItemInput, readDownloadToken } from './items.ts';
import { coffreGone } from './service.ts';
import type { CoffreAccessLevel, CoffreAction } from './vocabulary.ts';

// What a member does with their invitation link, which is the credential
// (docs/coffres.md, "Members"): open the vault, list its items, download what
// `download` access allows, add items with `upload` access. Every request is
// checked against the member's row as it is now, and written to the access log.

/** Access levels are cumulative: `upload` may download, `download` may list. */
const RANK: Record<CoffreAccessLevel, number> = { view: 0, download: 1, upload: 2 };
export const allows = (member: MemberRow, wanted: CoffreAccessLevel) => RANK[member.access] >= RANK[wanted];

export type Visit = { coffre: CoffreRow; member: MemberRow };

/**
 * Why an item a member declared may no longer be uploaded or shown (docs/coffres.md, "Items"): the
 * member was revoked, or no longer has `upload` access. Checked again at every upload request and
 * when the upload completes, not only when the upload URL was issued. Null while they may.
 */
export function uploaderRefusal(member: MemberRow | null): DomainError | null {
  if (member && !member.revoked_at && allows(member, 'upload')) return null;
  const revoked = !member || member.revoked_at !== null;
  return new DomainError(
    'forbidden',
    revoked
      ? 'Your access to this vault was revoked: this upload URL no longer works.'
      : 'Your access to this vault no longer allows uploads: this upload URL no longer works.',
    { details: { reason: revoked ? 'revoked' : 'access' } },
  );
}

/**
 * The vault and member an invitation link names, while it may be used: 404 for a link that is
 * not one, 410 once it or the vault has expired, 403 once revoked or replaced by a newer invitation.
 */
export async function openInvitation(services: Services, token: string): Promise<Visit> {
  const check = verifyToken(services.keys.links, 'coffre-invitation', token);
  if (!check.ok) {
    throw check.reason === 'expired'
      ? new DomainError('not_found', 'This invitation has expired: ask the vault owner for a new one.', {
          kind: 'gone',
          details: { reason: 'invitation_expired' },
        })
      : new DomainError('not_found', 'No such invitation.');
  }
  const queries = createCoffreQueries(services.db);
  const member = await queries.memberById(check.data.m ?? '');
  if (!member) throw new DomainError('not_found', 'No such invitation.');
  const coffre = await queries.findById(member.coffre_id);
  if (!coffre || coffre.status === 'deleted') throw new DomainError('not_found', 'No such invitation.');
  if (coffre.status === 'expired' || (coffre.expires_at && coffre.expires_at.getTime() <= Date.now())) {
    throw coffreGone();
  }
  const current = member.invitation_nonce !== null && sameNonce(member.invitation_nonce, check.data.n ?? '');
  if (member.revoked_at || !current) {
    throw new DomainError(
      'forbidden',
      member.revoked_at
        ? 'Your access to this vault was revoked.'
        : 'This invitation was replaced by a newer one: use the latest link you received.',
      { details: { reason: member.revoked_at ? 'revoked' : 'replaced' } },
    );
  }
  return { coffre, member };
}

/**
 * Whose Idempotency-Key records a member's writes make (api/extensions/idempotency.ts): the member
 * an invitation link names while it may be used, else null and the route answers why.
 */
export async function invitationRecordOwner(services: Services, token: string): Promise<RecordOwner | null> {
  try {
    const { member } = await openInvitation(services, token);
    return {
      workspaceId: member.workspace_id,
      environment: member.environment,
      keyKind: 'coffre_member',
      keyId: member.id,
    };
  } catch (error) {
    if (error instanceof DomainError) return null;
    throw error;
  }
}

function sameNonce(a: string, b: string): boolean {
  return constantTimeEqual(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export function need(visit: Visit, wanted: CoffreAccessLevel) {
  if (!allows(visit.member, wanted)) {
    throw new DomainError(
      'forbidden',
      `Your access to this vault is \`${visit.member.access}\`: it does not allow this.`,
      {
        details: { access: visit.member.access, required: wanted },
      },
    );
  }
}

async function log(services: Services, visit: Visit, action: CoffreAction, ip: string | null, item?: ItemRow) {
  await createCoffreQueries(services.db).logAccess({
    coffre: visit.coffre,
    actorType: 'member',
    memberId: visit.member.id,
    actor: visit.member.email,
    action,
    item: item ? { id: item.id, name: item.name } : null,
    ip,
  });
}

/** What a member sees of an item: never where it is stored, nor who else added it. */
function presentVisibleItem(item: ItemRow) {
  return {
    id: itemIdOf(item.id),
    object: 'coffre_item' as const,
    name: item.name,
    size: item.size,
    mime_type: item.mime_type,
    created_at: item.created_at,
  };
}

export async function visibleItems(services: Services, visit: Visit) {
  return createCoffreQueries(services.db).itemsOf(visit.coffre.id, ['available']);
}

/**
 * Opens the vault: logged as `opened`; the member's first open of the (UTC) day also records
 * `coffre.accessed`, so that webhooks hear of visits without one event per page load.
 */
export async function viewCoffre(services: Services, token: string, ip: string | null) {
  const visit = await openInvitation(services, token);
  await services.db.transaction(async (tx) => {
    const queries = createCoffreQueries(tx);
    await queries.logAccess({
      coffre: visit.coffre,
      actorType: 'member',
      memberId: visit.member.id,
      actor: visit.member.email,
      action: 'opened',
      item: null,
      ip,
    });
    if (await queries.firstOpenToday(visit.member.id)) {
      await createEventQueries(tx).record(
        { workspaceId: visit.coffre.workspace_id, environment: visit.coffre.environment },
        'coffre.accessed',
        {
          coffre: coffreView(visit.coffre),
          ip_address: ip,
          accessed_by: visit.member.email,
          member: memberView(visit.member),
        },
      );
    }
  });
  const items = await visibleItems(services, visit);
  return {
    object: 'coffre_access' as const,
    coffre: {
      name: visit.coffre.name,
      description: visit.coffre.description,
      expires_at: visit.coffre.expires_at,
    },
    member: {
      email: visit.member.email,
      name: visit.member.name,
      access: visit.member.access,
      can_download: allows(visit.member, 'download'),
      can_upload: allows(visit.member, 'upload'),
      invitation_expires_at: visit.member.invitation_expires_at,
    },
    items: items.map(presentVisibleItem),
  };
}

/** The items a member may see, logged as `listed`. */
export async function listVisibleItems(services: Services, token: string, ip: string | null) {
  const visit = await openInvitation(services, token);
  await log(services, visit, 'listed', ip);
  const items = await visibleItems(services, visit);
  return { object: 'list' as const, data: items.map(presentVisibleItem) };
}

/** A download link for one item: `download` access or more. The download itself is logged when it starts. */
export async function memberDownloadLink(services: Services, token: string, itemId: string) {
  const visit = await openInvitation(services, token);
  need(visit, 'download');
  const item = await visibleItem(services, visit, itemId);
  const link = downloadLink(services, item, { member: visit.member });
  return {
    object: 'download_link' as const,
    item: presentVisibleItem(item),
    download_url: link.url,
    expires_in: link.expiresIn,
  };
}

async function visibleItem(services: Services, visit: Visit, itemId: string): Promise<ItemRow> {
  const uuid = itemUuidOf(itemId);
  const item = uuid ? await createCoffreQueries(services.db).itemById(uuid) : null;
  if (!item || item.coffre_id !== visit.coffre.id) throw new DomainError('not_found', 'No such item in this vault.');
  if (item.status === 'deleted' || item.status === 'rejected') throw itemGone(item);
  if (item.status !== 'available') {
    throw new DomainError('validation_error', 'This item is still being uploaded or scanned.', { kind: 'conflict' });
  }
  return item;
}

/** A new item and its upload URL: `upload` access. Logged as `uploaded` once its last byte is stored. */
export async function memberUpload(services: Services, token: string, input: NewItemInput) {
  const visit = await openInvitation(services, token);
  need(visit, 'upload');
  return services.db.transaction(async (tx) => {
    const coffre = await createCoffreQueries(tx).findById(visit.coffre.id, true);
    if (coffre?.status !== 'active') throw coffreGone();
    return addItem(services, tx, coffre, input, { member: visit.member });
  });
}

/**
 * The items a member may download, with where each is stored: what a whole-vault or selection
 * download (lib/zip) streams from. Empty for `view` access.
 */
export async function downloadableItems(services: Services, visit: Visit): Promise<readonly ItemRow[]> {
  if (!allows(visit.member, 'download')) return [];
  return visibleItems(services, visit);
}

/**
 * The item a download link names, checked again now (the member still holds `download` access,
 * the vault and item are still there), and the download logged as its actor's.
 */
export async function startDownload(services: Services, token: string, ip: string | null) {
  const link = readDownloadToken(services, token);
  const queries = createCoffreQueries(services.db);
  const item = await queries.itemById(link.itemId);
  if (!item) throw new DomainError('not_found', 'No such download URL.');
  if (item.status === 'deleted' || item.status === 'rejected') throw itemGone(item);
  const coffre = await queries.findById(item.coffre_id);
  if (!coffre || coffre.status === 'deleted') throw new DomainError('not_found', 'No such download URL.');
  if (coffre.status === 'expired') throw coffreGone();
  if (item.status !== 'available') throw new DomainError('not_found', 'No such download URL.');
  let actor: Actor;
  if (link.memberId) {
    const member = await queries.memberById(link.memberId);
    if (!member || member.coffre_id !== coffre.id || member.revoked_at || !allows(member, 'download')) {
      throw new DomainError('forbidden', 'Your access to this vault no longer allows downloads.');
    }
    actor = { member };
  } else {
    actor = { apiKeyId: link.apiKeyId ?? '' };
  }
  const counted = await countSandboxDownloads(services.db, coffre.environment, 'coffre_item', [item.id]);
  if (!counted.has(item.id)) throw downloadLimitReached('This item');
  await logDownloads(services, coffre, [item], actor, ip);
  return { coffre, item };
}

/** Each item's download, in the access log as its actor's (a member's address, or an API key's id). */
export async function logDownloads(
  services: Services,
  coffre: CoffreRow,
  items: readonly ItemRow[],
  actor: Actor,
  ip: string | null,
) {
  const queries = createCoffreQueries(services.db);
  for (const item of items) {
    await queries.logAccess({
      coffre,
      actorType: 'member' in actor ? 'member' : 'api_key',
      memberId: 'member' in actor ? actor.member.id : null,
      actor: 'member' in actor ? actor.member.email : actor.apiKeyId,
      action: 'downloaded',
      item: { id: item.id, name: item.name },
      ip,
    });
  }
}
