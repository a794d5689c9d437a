import { signToken, verifyToken } from '../crypto/signed-token.ts';
import { type CoffreRow, createCoffreQueries, type ItemRow } from '../db/queries/coffres.ts';
import { DomainError } from '../errors.ts';
import { countSandboxDownloads, downloadLimitReached } from '../sandbox.ts';
import type { Services } from '../services.ts';
import type { Caller } from '../tenancy.ts';
import { type Archive, type ArchiveEntry, archiveName, openArchive } from '../zip/archives.ts';
import { planZip } from '../zip/stream.ts';
import { allows, logDownloads, need, openInvitation, visibleItems } from './access.ts';
import { itemIdOf, itemUuidOf } from './ids.ts';
import { DOWNLOAD_URL_SECONDS, openItem } from './items.ts';
import { coffreGone, findCoffre } from './service.ts';

// A vault selection as one ZIP (docs/coffres.md, "Download as one ZIP"): a
// member with `download` access asks for an archive link to some or all of the
// items they may download; the owner streams one with an API key. The archive
// is the one writer of lib/zip, decrypting each item as its turn comes. Every
// item in it is logged as `downloaded` when the archive starts, as a single
// item's download is.

/** Items in one archive at most: the selection travels in the archive link. */
export const MAX_ARCHIVE_ITEMS = 100;

/** The items of `available` that `itemIds` names (all of them when it is absent), checked and deduplicated. */
function selection(available: readonly ItemRow[], itemIds: readonly string[] | undefined): ItemRow[] {
  let items: ItemRow[];
  if (itemIds === undefined) {
    items = [...available];
  } else {
    const byId = new Map(available.map((item) => [item.id, item]));
    items = [];
    for (const itemId of new Set(itemIds)) {
      const item = byId.get(itemUuidOf(itemId) ?? '');
      if (!item) {
        throw new DomainError('not_found', `No item ${itemId} that you may download is in this vault.`, {
          param: 'item_ids',
        });
      }
      items.push(item);
    }
  }
  if (items.length === 0) {
    throw new DomainError('forbidden', 'There is nothing in this vault to download yet.', {
      details: { reason: 'nothing_to_archive' },
    });
  }
  if (items.length > MAX_ARCHIVE_ITEMS) {
    throw new DomainError(
      'validation_error',
      `An archive holds at most ${MAX_ARCHIVE_ITEMS} items: choose them with item_ids, or download items one by one.`,
      { param: 'item_ids', kind: 'inapplicable' },
    );
  }
  return items;
}

/**
 * The items an archive may still hold, each counted as one download: in the sandbox, items past
 * their 5 downloads are left out, as deleted ones are; 403 `limit_reached` when none is left.
 */
async function withinDownloadLimit(services: Services, coffre: CoffreRow, items: readonly ItemRow[]) {
  const ids = items.map((item) => item.id);
  const counted = await countSandboxDownloads(services.db, coffre.environment, 'coffre_item', ids);
  const left = items.filter((item) => counted.has(item.id));
  if (left.length === 0) throw downloadLimitReached('Every item of this archive');
  return left;
}

function entries(services: Services, items: readonly ItemRow[]): ArchiveEntry[] {
  return items.map((item) => ({
    name: item.name,
    size: item.size,
    modified: item.uploaded_at ?? item.created_at,
    open: () => openItem(services, item),
  }));
}

/**
 * `POST /v1/coffre-access/{token}/archive-link`: a link, valid as long as an item's download
 * link, that streams the chosen items (all the member may download when none are named).
 */
export async function memberArchiveLink(services: Services, token: string, input: { item_ids?: string[] | undefined }) {
  const visit = await openInvitation(services, token);
  need(visit, 'download');
  const items = selection(await visibleItems(services, visit), input.item_ids);
  const expiresAt = new Date(Date.now() + DOWNLOAD_URL_SECONDS * 1000);
  const archiveToken = signToken(
    services.keys.links,
    'coffre-archive',
    { m: visit.member.id, i: items.map((item) => itemIdOf(item.id).slice(5)).join(',') },
    expiresAt,
  );
  return {
    object: 'archive_link' as const,
    archive_url: `${services.config.api.publicBaseUrl}/v1/coffre-archives/${archiveToken}`,
    archive_expires_in: DOWNLOAD_URL_SECONDS,
    size: planZip(entries(services, items)).size,
    filename: archiveName(visit.coffre.name),
  };
}

/**
 * `GET /v1/coffre-archives/{token}`: the archive a member's link names, checked again now (still
 * a member with download access, the vault still open). Items deleted since the link was made
 * are left out; when none is left, 404.
 */
export async function startMemberArchive(
  services: Services,
  token: string,
  ip: string | null,
): Promise<{ coffre: CoffreRow; archive: Archive }> {
  const check = verifyToken(services.keys.links, 'coffre-archive', token);
  if (!check.ok) {
    throw check.reason === 'expired'
      ? new DomainError('forbidden', 'This archive link has expired: ask the vault page for a new one.')
      : new DomainError('not_found', 'No such archive link.');
  }
  const queries = createCoffreQueries(services.db);
  const member = await queries.memberById(check.data.m ?? '');
  const coffre = member ? await queries.findById(member.coffre_id) : null;
  if (!member || !coffre || coffre.status === 'deleted') throw new DomainError('not_found', 'No such archive link.');
  if (coffre.status === 'expired') throw coffreGone();
  if (member.revoked_at || !allows(member, 'download')) {
    throw new DomainError('forbidden', 'Your access to this vault no longer allows downloads.');
  }
  const wanted = new Set((check.data.i ?? '').split(',').map((hex) => itemUuidOf(`cofi_${hex}`)));
  const available = (await queries.itemsOf(coffre.id, ['available'])).filter((item) => wanted.has(item.id));
  if (available.length === 0)
    throw new DomainError('not_found', 'Nothing at this archive link can be downloaded any more.');
  const items = await withinDownloadLimit(services, coffre, available);
  await logDownloads(services, coffre, items, { member }, ip);
  return { coffre, archive: openArchive(coffre.name, entries(services, items)) };
}

/** `GET /v1/coffres/{id}/archive`: the owner's copy of the chosen items, or of every available one. */
export async function ownerCoffreArchive(
  services: Services,
  caller: Caller,
  id: string,
  itemIds: readonly string[] | undefined,
  ip: string | null,
  admit: (coffreId: string) => void = () => {},
): Promise<{ coffre: CoffreRow; archive: Archive }> {
  const coffre = await findCoffre(services, caller, id);
  if (coffre.status === 'expired') throw coffreGone();
  const available = await createCoffreQueries(services.db).itemsOf(coffre.id, ['available']);
  // Refused (no download slot) before any item is logged or counted as downloaded.
  admit(coffre.id);
  const items = await withinDownloadLimit(services, coffre, selection(available, itemIds));
  await logDownloads(services, coffre, items, { apiKeyId: caller.apiKeyId }, ip);
  return { coffre, archive: openArchive(coffre.name, entries(services, items)) };
}
