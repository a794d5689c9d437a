import { randomUUID } from 'node:crypto';
import { pipeline, type Readable, Transform } from 'node:stream';
import { signToken, verifyToken } from '../crypto/signed-token.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { createRecipientQueries, type PersonalLink } from '../db/queries/recipients.ts';
import { createShareQueries } from '../db/queries/shares.ts';
import { createTransferQueries, type FileRow, type TransferRow } from '../db/queries/transfers.ts';
import { DomainError } from '../errors.ts';
import { transferEventView } from '../events/views.ts';
import type { Services } from '../services.ts';
import { ContentDestroyedError, openForDownload } from '../uploads/content.ts';
import { checkCountry } from './geo.ts';
import { blockedError, blockedReason, findShared } from './share.ts';
import { checkPassword, type Requester, unlockedBy } from './share-passwords.ts';
import type { DownloadPath } from './vocabulary.ts';

// Download links: each download-links call counts one download and is one
// grant, whose links serve their files once each, resumable with Range
// (docs/transfers.md, "Download links").

/**
 * Checks the password, counts one download (atomically against max_downloads)
 * and returns a short-lived link per file. One call is one download of the
 * transfer, whatever the number of files fetched with the links. The call is
 * one grant: each of its links serves its file until the last byte has been
 * sent once (openDownload).
 */
export type DownloadLinksInput = {
  password?: string | undefined;
  file_id?: string | undefined;
  unlock?: string | undefined;
};

export async function issueDownloadLinks(
  services: Services,
  shortCode: string,
  input: DownloadLinksInput,
  requester: Requester,
  path: DownloadPath = 'download_links',
) {
  const {
    transfer,
    files: wanted,
    personal,
    grant,
    totalDownloads,
  } = await grantDownload(services, shortCode, input, requester, { path });
  const seconds = services.config.transfers.downloadLinkSeconds;
  const expiresAt = new Date(Date.now() + seconds * 1000);
  const personalData: Record<string, string> = personal ? { r: personal.id } : {};
  return {
    object: 'download_links' as const,
    total_downloads: totalDownloads,
    files: wanted.map((file) => ({
      file_id: file.id,
      name: file.name,
      size: file.size,
      download_url: `${services.config.api.publicBaseUrl}/v1/downloads/${signToken(services.keys.links, 'download', { f: file.id, t: transfer.id, g: grant, ...personalData }, expiresAt)}`,
      download_expires_in: seconds,
    })),
  };
}

/** One counted download of a shared transfer: what issueDownloadLinks and archive links are made from. */
export type Grant = {
  transfer: TransferRow;
  /** The files the grant serves: all of them, or the one `file_id` named. */
  files: readonly FileRow[];
  personal: PersonalLink | null;
  grant: string;
  totalDownloads: number;
};

/**
 * Checks the link's state, the client's country and the password, counts one download atomically
 * against max_downloads, records it (events, the recipient's grant for a personal link) and names
 * the grant. `refuse` runs before anything is counted, for callers that cannot serve this transfer
 * at all; `path` is how the recipient downloads, for `transfer.geo_blocked`.
 */
export async function grantDownload(
  services: Services,
  shortCode: string,
  input: DownloadLinksInput,
  requester: Requester,
  options: { grant?: string; refuse?: (transfer: TransferRow) => void; path?: DownloadPath } = {},
): Promise<Grant> {
  const { transfer, files, personal } = await findShared(services, shortCode);
  const blocked = blockedReason(transfer);
  if (blocked) throw blockedError(blocked);
  // Before the password: from outside its countries, a transfer takes no guesses either.
  const country = await checkCountry(services, transfer, requester, options.path ?? 'download_links', personal);
  const tenant = { workspaceId: transfer.workspace_id, environment: transfer.environment };
  if (!unlockedBy(services, transfer, input.unlock)) await checkPassword(services, transfer, input.password, requester);
  const wanted = input.file_id ? files.filter((f) => f.id === input.file_id) : files;
  if (wanted.length === 0) throw new DomainError('not_found', 'No such file in this transfer.', { param: 'file_id' });
  options.refuse?.(transfer);

  const grant = options.grant ?? randomUUID();
  const counted = await services.db.transaction(async (tx) => {
    const queries = createTransferQueries(tx);
    const row = await queries.countDownload(transfer.id);
    if (!row) return null;
    await queries.recordDownload(transfer.id, requester.ip, requester.userAgent?.slice(0, 512) ?? null);
    // Through a personal link, the grant is also the recipient's download, counted once delivered whole.
    if (personal) await createRecipientQueries(tx).openGrant(personal.id, grant, wanted.map(servedSize(transfer)));
    const txEvents = createEventQueries(tx);
    const data = {
      transfer: transferEventView(row),
      total_downloads: row.total_downloads,
      ...(personal ? { recipient: { id: personal.recipient_id, email: personal.email } } : {}),
      country_code: country,
    };
    await txEvents.record(tenant, 'transfer.downloaded', data);
    if (row.total_downloads === 1) await txEvents.record(tenant, 'transfer.first_download', data);
    if (row.max_downloads !== null && row.total_downloads === row.max_downloads) {
      await txEvents.record(tenant, 'transfer.limit_reached', data);
    }
    return row;
  });
  if (!counted)
    throw blockedError(
      blockedReason((await createTransferQueries(services.db).findById(transfer.id)) ?? transfer) ?? 'limit_reached',
    );
  return { transfer, files: wanted, personal, grant, totalDownloads: counted.total_downloads };
}

/** Bytes `start` to `end` (inclusive) of a file. */
export type ByteRange = { start: number; end: number };

/** A download link that verified, for a transfer still downloadable. */
export type DownloadTarget = {
  transfer: TransferRow;
  file: FileRow;
  grantId: string;
  expiresAt: Date;
  /** The personal link the grant was issued through (docs/recipients.md), or null. */
  personalLinkId: string | null;
};

/** What a download sends: `content`, the whole file of `size` bytes or its `range`. */
export type Download = {
  content: Readable;
  size: number;
  range: ByteRange | undefined;
  name: string;
  /** What the bytes are: ciphertext for an e2e file, whatever it was sent as. */
  mimeType: string;
};

/**
 * The file a download link names, while the link and its transfer are good and the client is in
 * the transfer's countries (a link handed on to someone elsewhere is refused like its share link).
 */
export async function resolveDownload(
  services: Services,
  token: string,
  requester: Requester,
): Promise<DownloadTarget> {
  const check = verifyToken(services.keys.links, 'download', token);
  if (!check.ok) {
    throw check.reason === 'expired' ? linkExpired() : new DomainError('not_found', 'No such download link.');
  }
  // Links issued before grants existed carry none: they are treated as expired.
  const grantId = check.data.g;
  if (!grantId || !/^[0-9a-f-]{36}$/.test(grantId)) throw linkExpired();
  const queries = createTransferQueries(services.db);
  const [transfer, file] = await Promise.all([queries.findById(check.data.t ?? ''), queries.file(check.data.f ?? '')]);
  if (!transfer || !file || file.transfer_id !== transfer.id)
    throw new DomainError('not_found', 'No such download link.');
  // The link was issued when the transfer was downloadable; it must still be (revocation and expiry are immediate).
  const blocked = blockedReason(transfer);
  if (blocked && blocked !== 'limit_reached') throw blockedError(blocked);
  await checkCountry(services, transfer, requester, 'file');
  return { transfer, file, grantId, expiresAt: check.expiresAt, personalLinkId: check.data.r ?? null };
}

/** The bytes a file's download link serves: its ciphertext in e2e mode, else its plaintext. */
export const servedSize =
  (transfer: TransferRow) =>
  (file: FileRow): { id: string; size: number } => ({
    id: file.id,
    size: transfer.encryption_mode === 'e2e' ? (file.encrypted_size ?? file.size) : file.size,
  });

/**
 * Streams one file for a download link; a range fetches and decrypts only the
 * segments it needs. A link serves one request at a time (another is refused
 * with `link_in_use`) and may be resumed with a range. Once a download has sent
 * the file's last byte, a request from byte 0 is refused (`link_used`), and
 * ranges that resume are served only while the link has sent less than twice
 * the file's size in all: a connection that dropped with the end of the file
 * in flight can still finish, and a link never sends more than two copies' worth.
 */
export async function openDownload(
  services: Services,
  target: DownloadTarget,
  range: ByteRange | undefined,
): Promise<Download> {
  const { transfer, file, grantId } = target;
  const { size } = servedSize(transfer)(file);
  const use = { grantId, fileId: file.id, holder: randomUUID() };
  const uses = createShareQueries(services.db);
  const claim = await uses.claimLinkUse({
    ...use,
    expiresAt: target.expiresAt,
    start: range?.start ?? 0,
    length: range ? range.end - range.start + 1 : size,
    budget: 2 * size,
  });
  if (claim === 'used') {
    throw new DomainError(
      'forbidden',
      'This download link has already delivered its file. Ask the share page for a new one.',
      {
        details: { reason: 'link_used' },
      },
    );
  }
  if (claim === 'in_use') {
    throw new DomainError(
      'rate_limited',
      'This download link is being used by another request. Try again in a moment.',
      {
        retryAfterSeconds: 1,
        details: { reason: 'link_in_use' },
      },
    );
  }
  let content: Readable;
  try {
    content = await openForDownload(services, file, transfer.encryption_mode, range);
  } catch (error) {
    await uses.endLinkUse(use, 0, false);
    // Keys destroyed between the check above and now: the transfer just ended.
    if (error instanceof ContentDestroyedError) throw blockedError('revoked');
    throw error;
  }
  const reachesEnd = !range || range.end >= size - 1;
  return {
    content: spentOnLastByte(content, reachesEnd, (bytes, completed) => uses.endLinkUse(use, bytes, completed)),
    size,
    range,
    name: file.name,
    mimeType: transfer.encryption_mode === 'e2e' ? 'application/octet-stream' : file.mime_type,
  };
}

function linkExpired() {
  return new DomainError('forbidden', 'This download link has expired. Ask the share page for a new one.', {
    details: { reason: 'link_expired' },
  });
}

/**
 * Passes `content` through and reports how the use ended. With `reachesEnd`,
 * the last chunk is held back until the use is recorded as complete: no client
 * has the file's last byte before the link is spent. A stream that stops
 * before its end (the client went away) ends the use without completing it,
 * so the link can resume.
 */
function spentOnLastByte(
  content: Readable,
  reachesEnd: boolean,
  end: (bytes: number, completed: boolean) => Promise<void>,
): Readable {
  let held: Buffer | null = null;
  let sent = 0;
  let ended = false;
  const out = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      const previous = held;
      held = chunk;
      if (previous) sent += previous.length;
      callback(null, previous ?? undefined);
    },
    flush(callback) {
      const last = held;
      held = null;
      if (!reachesEnd) {
        if (last) sent += last.length;
        return callback(null, last ?? undefined);
      }
      ended = true;
      end(sent + (last?.length ?? 0), true).then(
        () => callback(null, last ?? undefined),
        (error: Error) => {
          ended = false;
          callback(error);
        },
      );
    },
  });
  out.once('close', () => {
    // A failed write leaves the lease to run out with the link itself.
    if (!ended) end(sent, false).catch(() => undefined);
  });
  pipeline(content, out, () => undefined);
  return out;
}
