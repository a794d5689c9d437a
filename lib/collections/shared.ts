import { type CollectionRow, createCollectionQueries, type MemberRow } from '../db/queries/collections.ts';
import { createTransferQueries, type FileRow } from '../db/queries/transfers.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import { type DownloadLinksInput, issueDownloadLinks } from '../transfers/download-links.ts';
import { scanWarning } from '../transfers/present.ts';
import { blockedReason } from '../transfers/share.ts';
import type { Requester } from '../transfers/share-passwords.ts';
import type { CollectionAccess } from './vocabulary.ts';

// What a visitor holding a collection's link sees and downloads
// (docs/collections.md, "The share link"). The link is only a way to reach
// each transfer's own download machinery: it never bypasses a transfer's
// password, limits, approval or end, and it hands out no transfer's own link.

const tenantOf = (collection: CollectionRow) => ({
  workspaceId: collection.workspace_id,
  environment: collection.environment,
});

export async function findSharedCollection(services: Services, code: string): Promise<CollectionRow> {
  const collection = await createCollectionQueries(services.db).findByShareCode(code);
  if (!collection) throw new DomainError('not_found', 'No collection at this link.');
  return collection;
}

/** How a visitor can download a transfer: end-to-end ones only through their own link, which holds the key. */
function accessOf(transfer: MemberRow): CollectionAccess {
  if (transfer.encryption_mode === 'e2e') return 'own_link';
  return transfer.password_hash === null ? 'open' : 'password';
}

export type DownloadableTransfer = { transfer: MemberRow; access: CollectionAccess; files: readonly FileRow[] };

/**
 * The collection's transfers a visitor may download now, in the collection's order, with their
 * files. "Download all as one ZIP" (lib/zip/) plugs in here: it takes the `open` ones (the
 * `password` ones only with their passwords, never `own_link`), counts one download of each
 * through issueDownloadLinks and streams their files into the archive.
 */
export async function downloadableTransfers(
  services: Services,
  collection: CollectionRow,
): Promise<DownloadableTransfer[]> {
  const members = await createCollectionQueries(services.db).members(tenantOf(collection), collection.id);
  const now = Date.now();
  const available = members.filter((member) => blockedReason(member, now) === null);
  const files = Map.groupBy(
    await createTransferQueries(services.db).filesOf(available.map((member) => member.id)),
    (file) => file.transfer_id,
  );
  return available.map((transfer) => ({
    transfer,
    access: accessOf(transfer),
    files: files.get(transfer.id) ?? [],
  }));
}

/**
 * One transfer as a visitor sees it: behind a password or end-to-end, no files; behind a password,
 * no title, whatever its `access` (an end-to-end transfer may have a password too), as its own
 * share view hides it until unlocked (lib/transfers/share.ts, presentShared).
 */
export function presentSharedItem({ transfer, access, files }: DownloadableTransfer) {
  return {
    id: transfer.id,
    access,
    transfer_title: transfer.password_hash === null ? transfer.transfer_title || null : null,
    encryption_mode: transfer.encryption_mode,
    password_required: transfer.password_hash !== null,
    expires_at: transfer.expires_at,
    downloads_remaining:
      transfer.max_downloads === null ? null : Math.max(0, transfer.max_downloads - transfer.total_downloads),
    scan_warning: scanWarning(transfer),
    files:
      access === 'open'
        ? files.map((f) => ({ id: f.id, name: f.name, size: f.size, mime_type: f.mime_type, sha256: f.sha256 }))
        : null,
  };
}

export type SharedCollectionItem = ReturnType<typeof presentSharedItem>;

/** `GET /v1/shared-collections/{code}`: no owner, workspace, recipients or transfer links. */
export async function viewSharedCollection(services: Services, code: string) {
  const collection = await findSharedCollection(services, code);
  const items = await downloadableTransfers(services, collection);
  return {
    object: 'shared_collection' as const,
    title: collection.title,
    description: collection.description,
    transfers: items.map(presentSharedItem),
  };
}

export type SharedCollectionView = Awaited<ReturnType<typeof viewSharedCollection>>;

export type CollectionDownloadLinksInput = {
  transfer_id: string;
  file_id?: string | undefined;
  password?: string | undefined;
};

/**
 * Download links for one transfer of the collection, issued by the transfer's own machinery: its
 * password is checked and one download counted as through its own link. End-to-end transfers are
 * refused: their key is only in their own link.
 */
export async function issueCollectionDownloadLinks(
  services: Services,
  code: string,
  input: CollectionDownloadLinksInput,
  requester: Requester,
) {
  const collection = await findSharedCollection(services, code);
  const members = await createCollectionQueries(services.db).members(tenantOf(collection), collection.id);
  const transfer = members.find((member) => member.id === input.transfer_id);
  if (!transfer) {
    throw new DomainError('not_found', 'No such transfer in this collection.', { param: 'transfer_id' });
  }
  if (accessOf(transfer) === 'own_link') {
    throw new DomainError(
      'forbidden',
      'This transfer is end-to-end encrypted: download it with the link its sender gave you, which holds its key.',
      { param: 'transfer_id', details: { reason: 'end_to_end' } },
    );
  }
  const links: DownloadLinksInput = { password: input.password, file_id: input.file_id };
  return issueDownloadLinks(services, transfer.short_code, links, requester);
}
