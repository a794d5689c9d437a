import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { signToken, verifyToken } from '../crypto/signed-token.ts';
import { type CoffreRow, createCoffreQueries, type ItemRow, type MemberRow } from '../db/queries/coffres.ts';
import { DomainError, notFound } from '../errors.ts';
import type { PageQuery } from '../pagination.ts';
import { checkDailyQuota, checkFileSize, sandboxLimits } from '../sandbox.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';
import { openForDownload } from '../uploads/content.ts';
import { checkPlannable, storedSize } from '../uploads/parts.ts';
import { uploadUrlEntry } from '../uploads/upload-urls.ts';
import { COFFRE_UPLOAD_KIND, itemIdOf, itemUuidOf } from './ids.ts';
import { type DownloadLink, presentItem } from './present.ts';
import { findCoffre, lockActiveCoffre, type Tx } from './service.ts';

// A vault's items: added through the shared upload pipeline (sealed at rest
// with AES-256-GCM, scanned), listed, downloaded through short-lived signed
// links, and shredded (docs/coffres.md, "Items").

const HOUR_MS = 3_600_000;
/** Like intake documents: a download_url is valid 300 seconds. */
export const DOWNLOAD_URL_SECONDS = 300;

/** What lists show: items being uploaded or scanned, and available ones. */
const LISTED = ['uploading', 'scanning', 'available'] as const;

export type NewItemInput = { name: string; size: number; mime_type?: string | undefined };

/** Whom an item, a download or an access-log entry is for: a member through their link, or an API key. */
export type Actor = { member: MemberRow } | { apiKeyId: string };

/** Creates an item and its upload URL, in the caller's transaction with the vault locked. */
export async function addItem(services: Services, tx: Tx, coffre: CoffreRow, input: NewItemInput, actor: Actor) {
  const maxBytes = services.config.transfers.maxFileBytes;
  if (input.size > maxBytes) {
    throw new DomainError('validation_error', `A vault item is at most ${maxBytes} bytes.`, { param: 'size' });
  }
  checkFileSize(coffre.environment, input.size, 'size');
  checkPlannable(input.size, 'server', services.config.transfers.uploads.maxParts, 'size');
  await checkSandboxItems(tx, coffre);
  const id = randomUUID();
  const item = await createCoffreQueries(tx).insertItem({
    workspaceId: coffre.workspace_id,
    environment: coffre.environment,
    id,
    coffreId: coffre.id,
    name: input.name,
    size: input.size,
    mimeType: input.mime_type ?? 'application/octet-stream',
    objectKey: `${coffre.environment}/${coffre.workspace_id}/coffres/${coffre.id}/${id}`,
    encryptedSize: storedSize(input.size, 'server'),
    uploadDeadline: new Date(Date.now() + services.config.transfers.uploadWindowHours * HOUR_MS),
    uploadedBy: 'member' in actor ? { memberId: actor.member.id } : { apiKeyId: actor.apiKeyId },
  });
  await services.workflows.coffres.startItem(
    { workspaceId: coffre.workspace_id, environment: coffre.environment },
    item.id,
  );
  const upload = uploadUrlEntry(
    services,
    { kind: COFFRE_UPLOAD_KIND, owner: coffre.id, file: item.id },
    item,
    item.upload_deadline,
  );
  return { item: presentItem(item), upload_url: { ...upload, file_id: itemIdOf(item.id) } };
}

/**
 * The sandbox's count limits (docs/coffres.md, "Sandbox"): at most 10 items in a vault (being
 * uploaded, scanned or available: deleted and rejected ones are shredded and free their place),
 * and 25 items added per rolling 24 hours across the workspace's sandbox vaults.
 */
async function checkSandboxItems(tx: Tx, coffre: CoffreRow) {
  const limits = sandboxLimits(coffre.environment);
  if (!limits) return;
  const held = await createCoffreQueries(tx).itemsOf(coffre.id, LISTED);
  if (held.length >= limits.maxFiles) {
    throw new DomainError('validation_error', `A sandbox vault holds at most ${limits.maxFiles} items.`);
  }
  const tenant = { workspaceId: coffre.workspace_id, environment: coffre.environment };
  await checkDailyQuota(tx, tenant, 'coffre_item', 'vault items');
}

export async function createItem(services: Services, caller: Caller, coffreId: string, input: NewItemInput) {
  return services.db.transaction(async (tx) => {
    const coffre = await lockActiveCoffre(tx, caller, coffreId);
    return addItem(services, tx, coffre, input, { apiKeyId: caller.apiKeyId });
  });
}

export async function listItems(services: Services, caller: Caller, coffreId: string, page: PageQuery) {
  await findCoffre(services, caller, coffreId);
  const filters = { coffre: coffreId };
  const window = services.paginator.open('coffre_items', filters, page);
  const rows = await createCoffreQueries(services.db).listItems(
    tenantOf(caller),
    coffreId,
    { statuses: LISTED },
    window,
  );
  return services.paginator.close('coffre_items', filters, page, rows, (row) => presentItem(row));
}

/** An item with a fresh download_url once it is available. */
export async function getItem(services: Services, caller: Caller, coffreId: string, itemId: string) {
  const item = await ownItem(services, caller, coffreId, itemId);
  const link = item.status === 'available' ? downloadLink(services, item, { apiKeyId: caller.apiKeyId }) : null;
  return presentItem(item, link);
}

export async function deleteItem(services: Services, caller: Caller, coffreId: string, itemId: string) {
  const item = await ownItem(services, caller, coffreId, itemId);
  await createCoffreQueries(services.db).destroyItem(item.id);
  await services.workflows.coffres.itemDeleted(item.id).catch(() => undefined);
  return { id: itemIdOf(item.id), object: 'coffre_item' as const, deleted: true as const };
}

async function ownItem(services: Services, caller: Caller, coffreId: string, itemId: string): Promise<ItemRow> {
  await findCoffre(services, caller, coffreId);
  const uuid = itemUuidOf(itemId);
  const item = uuid ? await createCoffreQueries(services.db).findItem(tenantOf(caller), coffreId, uuid) : null;
  if (!item) throw notFound('item in this vault');
  if (item.status === 'deleted' || item.status === 'rejected') throw itemGone(item);
  return item;
}

export function itemGone(item: ItemRow) {
  const why = item.status === 'rejected' ? 'it failed its malware scan' : 'it was deleted';
  return new DomainError('not_found', `This item is gone: ${why}, and its content was destroyed.`, {
    kind: 'gone',
    details: { status: item.status },
  });
}

/** A short-lived link that streams the decrypted item; the actor is named so the download is logged as theirs. */
export function downloadLink(services: Services, item: ItemRow, actor: Actor): DownloadLink {
  const expiresAt = new Date(Date.now() + DOWNLOAD_URL_SECONDS * 1000);
  const who: Record<string, string> = 'member' in actor ? { m: actor.member.id } : { k: actor.apiKeyId };
  // `n` makes each call's URL new, even within the second.
  const token = signToken(services.keys.links, 'coffre-download', { i: item.id, ...who, n: randomUUID() }, expiresAt);
  return { url: `${services.config.api.publicBaseUrl}/v1/coffre-downloads/${token}`, expiresIn: DOWNLOAD_URL_SECONDS };
}

/** What a download link names, if it verifies: the item and whose download it is. Expired is 403, as for intakes. */
export function readDownloadToken(services: Services, token: string) {
  const check = verifyToken(services.keys.links, 'coffre-download', token);
  if (!check.ok) {
    throw check.reason === 'expired'
      ? new DomainError('forbidden', 'This download URL has expired: ask for a fresh one.')
      : new DomainError('not_found', 'No such download URL.');
  }
  const { i = '', m, k } = check.data;
  return { itemId: i, memberId: m ?? null, apiKeyId: k ?? null };
}

/** The decrypted item, or the inclusive `range` of it. */
export function openItem(services: Services, item: ItemRow, range?: { start: number; end: number }): Promise<Readable> {
  return openForDownload({ ...services, objects: services.downloads.objects }, item, 'server', range);
}
