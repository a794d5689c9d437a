import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { downloadableTransfers, findSharedCollection } from '../collections/shared.ts';
import { signToken, verifyToken } from '../crypto/signed-token.ts';
import { createCollectionQueries } from '../db/queries/collections.ts';
import { createShareQueries } from '../db/queries/shares.ts';
import { createTransferQueries, type FileRow, type TransferRow } from '../db/queries/transfers.ts';
import { DomainError, notFound } from '../errors.ts';
import { countArchiveDelivery } from '../recipients/deliveries.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';
import { grantDownload } from '../transfers/download-links.ts';
import { checkCountry } from '../transfers/geo.ts';
import { blockedError, blockedReason } from '../transfers/share.ts';
import type { Requester } from '../transfers/share-passwords.ts';
import { type ContentDeps, ContentDestroyedError, openContent } from '../uploads/content.ts';
import { planZip, type ZipStream, zipStream } from './stream.ts';

// "Download all as ZIP" (docs/transfers.md): a transfer's owner streams it with
// an API key; a share link's or a collection link's visitor asks for a signed
// archive link, counted like download links, then streams it. Only server-mode
// content: end-to-end files are opened by the browser, which builds their
// archive itself (web/share.js with the same writer, sdk/src/zip.ts).

/** One file of an archive, from whatever holds it (a transfer's file, a vault item: lib/coffres/archive.ts). */
export type ArchiveEntry = { name: string; size: number; modified: Date; open: () => Promise<Readable> };

/** An archive ready to stream: its file name, its exact length and its bytes. */
export type Archive = { filename: string; zip: ZipStream };

const MAX_COLLECTION_TRANSFERS = 100;

/** Archives are public downloads: they read through the downloads' own object-store pool, never the uploads'. */
const downloadDeps = (services: Services): ContentDeps => ({
  keyring: services.keyring,
  objects: services.downloads.objects,
});

/** The archive's file name: its title, made safe for a download's name. */
export const archiveName = (title: string) => `${title.replace(/[/\\]/g, '_').trim() || 'download'}.zip`;

/** Streams `entries` as one ZIP, opening each file only when its turn comes. */
export function openArchive(title: string, entries: readonly ArchiveEntry[]): Archive {
  const zip = zipStream(entries, (index) => (entries[index] as ArchiveEntry).open());
  return { filename: archiveName(title), zip };
}

/** A server-mode transfer's files as archive entries, under `folder/` when given. */
export function transferEntries(deps: ContentDeps, transfer: TransferRow, files: readonly FileRow[], folder = '') {
  return files.map(
    (file): ArchiveEntry => ({
      name: folder ? `${folder}/${file.name}` : file.name,
      size: file.size,
      modified: file.uploaded_at ?? file.created_at,
      open: () =>
        openContent(deps, file, transfer.encryption_mode).catch((error: unknown) => {
          throw error instanceof ContentDestroyedError ? blockedError('revoked') : error;
        }),
    }),
  );
}

const titleOf = (transfer: TransferRow) => transfer.transfer_title ?? `transfer ${transfer.short_code}`;

function endToEnd(transfer: TransferRow): void {
  if (transfer.encryption_mode !== 'e2e') return;
  throw new DomainError(
    'validation_error',
    'This transfer is end-to-end encrypted: the server cannot read it, so it cannot build its archive. Download its files with their links, decrypt them and build the ZIP on the client (the share page does).',
    { kind: 'conflict', details: { reason: 'end_to_end' } },
  );
}

/**
 * `GET /v1/transfers/{id}/archive`: the owner's own copy. Counts no download; refused while not downloadable.
 * `admit` is told the transfer before anything is opened, and throws to refuse (the API takes a download slot).
 */
export async function ownerArchive(
  services: Services,
  caller: Caller,
  id: string,
  admit: (transferId: string) => void = () => {},
): Promise<Archive> {
  const queries = createTransferQueries(services.db);
  const transfer = await queries.find(tenantOf(caller), id);
  if (!transfer) throw notFound('transfer');
  endToEnd(transfer);
  const blocked = blockedReason(transfer);
  // The owner may fetch what waits for approval or reached its limit; not what is not (or no longer) there.
  if (blocked && !['awaiting_approval', 'rejected', 'limit_reached'].includes(blocked)) throw blockedError(blocked);
  const files = await queries.files(transfer.id);
  admit(transfer.id);
  return openArchive(titleOf(transfer), transferEntries(downloadDeps(services), transfer, files));
}

type ArchiveLink = {
  object: 'archive_link';
  archive_url: string;
  archive_expires_in: number;
  size: number;
  filename: string;
};

function link(
  services: Services,
  data: Record<string, string>,
  entries: readonly ArchiveEntry[],
  title: string,
): ArchiveLink {
  const seconds = services.config.transfers.downloadLinkSeconds;
  const token = signToken(services.keys.links, 'archive', data, new Date(Date.now() + seconds * 1000));
  return {
    object: 'archive_link',
    archive_url: `${services.config.api.publicBaseUrl}/v1/archives/${token}`,
    archive_expires_in: seconds,
    size: planZip(entries).size,
    filename: archiveName(title),
  };
}

/**
 * `POST /v1/shares/{code}/archive-link`: the same gate as download links (password, state,
 * limits, approval; one download counted), then one link that streams every file as a ZIP.
 */
export async function issueArchiveLink(
  services: Services,
  code: string,
  input: { password?: string | undefined },
  requester: Requester,
) {
  const granted = await grantDownload(services, code, { password: input.password }, requester, {
    refuse: endToEnd,
    path: 'archive_link',
  });
  const { transfer, files, grant, personal } = granted;
  const entries = transferEntries(downloadDeps(services), transfer, files);
  return {
    ...link(
      services,
      { t: transfer.id, g: grant, ...(personal ? { r: personal.id } : {}) },
      entries,
      titleOf(transfer),
    ),
    total_downloads: granted.totalDownloads,
  };
}

/**
 * `POST /v1/shared-collections/{code}/archive-link`: every transfer the visitor may download now,
 * each counted through its own machinery as its download links would be: the open ones, the
 * password ones whose password is given, never the end-to-end ones (their key is in their own link).
 */
export async function issueCollectionArchiveLink(
  services: Services,
  code: string,
  input: { passwords?: Record<string, string> | undefined },
  requester: Requester,
) {
  const collection = await findSharedCollection(services, code);
  const items = (await downloadableTransfers(services, collection)).filter(
    (item) => item.access === 'open' || (item.access === 'password' && input.passwords?.[item.transfer.id]),
  );
  if (items.length === 0) {
    throw new DomainError('forbidden', 'Nothing in this collection can be downloaded as one archive now.', {
      details: { reason: 'nothing_to_archive' },
    });
  }
  if (items.length > MAX_COLLECTION_TRANSFERS) {
    throw new DomainError(
      'validation_error',
      `An archive holds at most ${MAX_COLLECTION_TRANSFERS} transfers: download this collection's transfers one by one.`,
      { kind: 'inapplicable' },
    );
  }
  // Every country refusal before any transfer is counted: the archive is all of them or nothing.
  for (const { transfer } of items) await checkCountry(services, transfer, requester, 'archive_link');
  const grant = randomUUID();
  for (const { transfer } of items) {
    await grantDownload(services, transfer.short_code, { password: input.passwords?.[transfer.id] }, requester, {
      grant,
      path: 'archive_link',
    });
  }
  const ids = items.map((item) => item.transfer.id);
  const { title, entries } = await collectionEntries(services, code, ids);
  return link(services, { c: code, g: grant, t: ids.join(',') }, entries, title);
}

/** The files of the collection's transfers `ids` still downloadable, a folder per transfer. */
async function collectionEntries(services: Services, code: string, ids: readonly string[]) {
  const collection = await findSharedCollection(services, code);
  const members = await createCollectionQueries(services.db).members(
    { workspaceId: collection.workspace_id, environment: collection.environment },
    collection.id,
  );
  const wanted = members.filter((member) => ids.includes(member.id) && member.encryption_mode !== 'e2e');
  const files = Map.groupBy(
    await createTransferQueries(services.db).filesOf(wanted.map((m) => m.id)),
    (f) => f.transfer_id,
  );
  const entries = wanted.flatMap((transfer) => {
    const blocked = blockedReason(transfer);
    if (blocked && blocked !== 'limit_reached') return [];
    return transferEntries(downloadDeps(services), transfer, files.get(transfer.id) ?? [], titleOf(transfer));
  });
  return { title: collection.title, entries, files: [...files.values()].flat(), transfers: wanted };
}

/** A verified archive link: what it streams, and how its use is claimed and settled. */
export type ArchiveTarget = {
  archive: Archive;
  /** Whose download slots it takes. */
  subjectId: string;
  kind: 'transfer' | 'collection';
  /** Records how the response ended; `finished`: every byte went to the network. */
  settle: (sent: number, finished: boolean) => Promise<void>;
};

/**
 * `GET /v1/archives/{token}`: the archive while the link and what it names are still good. Like
 * a download link, it serves one request at a time and is spent once the whole archive has been
 * sent (an archive does not resume: a broken one may start again, within two archives' worth).
 * Through a personal link, the recipient's download counts only when the archive completes.
 */
export async function openArchiveLink(services: Services, token: string, requester: Requester): Promise<ArchiveTarget> {
  const check = verifyToken(services.keys.links, 'archive', token);
  if (!check.ok) {
    if (check.reason === 'expired') {
      throw new DomainError('forbidden', 'This archive link has expired. Ask the share page for a new one.', {
        details: { reason: 'link_expired' },
      });
    }
    throw new DomainError('not_found', 'No such archive link.');
  }
  const { t = '', g = '', r, c } = check.data;
  let opened: { archive: Archive; subjectId: string; files: FileRow[]; transfer: TransferRow | null };
  if (c) {
    const built = await collectionEntries(services, c, t.split(','));
    for (const transfer of built.transfers) await checkCountry(services, transfer, requester, 'archive');
    opened = { archive: openArchive(built.title, built.entries), subjectId: c, files: built.files, transfer: null };
  } else {
    const queries = createTransferQueries(services.db);
    const transfer = await queries.findById(t);
    if (!transfer) throw new DomainError('not_found', 'No such archive link.');
    const blocked = blockedReason(transfer);
    if (blocked && blocked !== 'limit_reached') throw blockedError(blocked);
    await checkCountry(services, transfer, requester, 'archive');
    const files = [...(await queries.files(transfer.id))];
    opened = {
      archive: openArchive(titleOf(transfer), transferEntries(downloadDeps(services), transfer, files)),
      subjectId: transfer.id,
      files,
      transfer,
    };
  }
  const first = opened.files[0];
  if (!first || opened.archive.zip.plan.entries.length === 0) {
    opened.archive.zip.stream.destroy();
    throw new DomainError('not_found', 'Nothing at this archive link can be downloaded any more.');
  }
  const size = opened.archive.zip.plan.size;
  const use = { grantId: g, fileId: first.id, holder: randomUUID() };
  const uses = createShareQueries(services.db);
  const claim = await uses.claimLinkUse({
    ...use,
    expiresAt: check.expiresAt,
    start: 0,
    length: size,
    budget: 2 * size,
  });
  if (claim !== 'claimed') {
    opened.archive.zip.stream.destroy();
    throw claim === 'used'
      ? new DomainError('forbidden', 'This archive link has already delivered its archive. Ask for a new one.', {
          details: { reason: 'link_used' },
        })
      : new DomainError('rate_limited', 'This archive link is being used by another request. Try again in a moment.', {
          retryAfterSeconds: 1,
          details: { reason: 'link_in_use' },
        });
  }
  const delivery = r && opened.transfer ? countArchiveDelivery(services, opened.transfer, opened.files, g, r) : null;
  return {
    archive: opened.archive,
    subjectId: opened.subjectId,
    kind: c ? 'collection' : 'transfer',
    settle: async (sent, finished) => {
      await uses.endLinkUse(use, sent, finished);
      if (finished) await delivery?.();
    },
  };
}
