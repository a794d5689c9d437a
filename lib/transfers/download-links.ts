import { randomUUID } from 'node:crypto';
import { pipeline, type Readable, Transform } from 'node:stream';
import { signToken, verifyToken } from '../crypto/signed-token.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { createShareQueries } from '../db/queries/shares.ts';
import { createTransferQueries } from '../db/queries/transfers.ts';
import { apiError } from '../errors.ts';
import { transferEventView } from '../events/views.ts';
import { type ByteRange, contentDisposition, parseRangeHeader } from '../http/range.ts';
import type { Services } from '../services.ts';
import { ContentDestroyedError, openContent } from './content.ts';
import { blockedError, blockedReason, findShared } from './share.ts';
import { checkPassword, type Requester, unlockedBy } from './share-passwords.ts';

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
) {
  const { transfer, files } = await findShared(services, shortCode);
  const blocked = blockedReason(transfer);
  if (blocked) throw blockedError(blocked);
  const tenant = { workspaceId: transfer.workspace_id, environment: transfer.environment };
  if (!unlockedBy(services, transfer, input.unlock)) await checkPassword(services, transfer, input.password, requester);
  const wanted = input.file_id ? files.filter((f) => f.id === input.file_id) : files;
  if (wanted.length === 0) throw apiError('not_found', 'No such file in this transfer.', { param: 'file_id' });

  const counted = await services.db.transaction(async (tx) => {
    const queries = createTransferQueries(tx);
    const row = await queries.countDownload(transfer.id);
    if (!row) return null;
    await queries.recordDownload(transfer.id, requester.ip, requester.userAgent?.slice(0, 512) ?? null);
    const txEvents = createEventQueries(tx);
    const data = { transfer: transferEventView(row), total_downloads: row.total_downloads };
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

  const seconds = services.config.transfers.downloadLinkSeconds;
  const expiresAt = new Date(Date.now() + seconds * 1000);
  const grant = randomUUID();
  return {
    object: 'download_links' as const,
    total_downloads: counted.total_downloads,
    files: wanted.map((file) => ({
      file_id: file.id,
      name: file.name,
      size: file.size,
      download_url: `${services.config.api.publicBaseUrl}/v1/downloads/${signToken(services.keys.links, 'download', { f: file.id, t: transfer.id, g: grant }, expiresAt)}`,
      download_expires_in: seconds,
    })),
  };
}

export type Download = {
  status: 200 | 206;
  stream: Readable;
  headers: Record<string, string>;
};

/**
 * Headers of every response of a download link, errors included: the file is
 * an attachment, never sniffed, and if a browser renders it anyway it runs in
 * a sandbox with no script, no same-origin access and nothing loaded.
 */
export const DOWNLOAD_SAFETY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "sandbox; default-src 'none'",
};

/**
 * Streams one file for a download link; a Range fetches and decrypts only the
 * segments it needs. A link serves one request at a time (another gets 429
 * `link_in_use`) and may be resumed with Range. Once a response has sent the
 * file's last byte, a request from byte 0 is refused (403 `link_used`), and
 * ranges that resume are served only while the link has sent less than twice
 * the file's size in all: a connection that dropped with the end of the file
 * in flight can still finish, and a link never sends more than two copies' worth.
 */
export async function openDownload(
  services: Services,
  token: string,
  rangeHeader: string | undefined,
): Promise<Download> {
  const check = verifyToken(services.keys.links, 'download', token);
  if (!check.ok) {
    throw check.reason === 'expired' ? linkExpired() : apiError('not_found', 'No such download link.');
  }
  // Links issued before grants existed carry none: they are treated as expired.
  const grantId = check.data.g;
  if (!grantId || !/^[0-9a-f-]{36}$/.test(grantId)) throw linkExpired();
  const queries = createTransferQueries(services.db);
  const [transfer, file] = await Promise.all([queries.findById(check.data.t ?? ''), queries.file(check.data.f ?? '')]);
  if (!transfer || !file || file.transfer_id !== transfer.id) throw apiError('not_found', 'No such download link.');
  // The link was issued when the transfer was downloadable; it must still be (revocation and expiry are immediate).
  const blocked = blockedReason(transfer);
  if (blocked && blocked !== 'limit_reached') throw blockedError(blocked);

  const size = transfer.encryption_mode === 'e2e' ? (file.encrypted_size ?? file.size) : file.size;
  const range = parseRangeHeader(rangeHeader, file.size);
  if (range === 'unsatisfiable') {
    throw apiError('validation_error', 'The requested range is outside the file.', {
      status: 416,
      param: 'Range',
      headers: { 'Content-Range': `bytes */${file.size}` },
    });
  }
  const wanted: ByteRange | undefined = range ?? undefined;

  const use = { grantId, fileId: file.id, holder: randomUUID() };
  const uses = createShareQueries(services.db);
  const claim = await uses.claimLinkUse({
    ...use,
    expiresAt: check.expiresAt,
    start: wanted?.start ?? 0,
    length: wanted ? wanted.end - wanted.start + 1 : size,
    budget: 2 * size,
  });
  if (claim === 'used') {
    throw apiError(
      'forbidden',
      'This download link has already delivered its file. Ask the share page for a new one.',
      {
        details: { reason: 'link_used' },
      },
    );
  }
  if (claim === 'in_use') {
    throw apiError('rate_limited', 'This download link is being used by another request. Try again in a moment.', {
      headers: { 'Retry-After': '1' },
      details: { reason: 'link_in_use' },
    });
  }
  let content: Readable;
  try {
    content = await openContent(services, file, transfer.encryption_mode, wanted);
  } catch (error) {
    await uses.endLinkUse(use, 0, false);
    // Keys destroyed between the check above and now: the transfer just ended.
    if (error instanceof ContentDestroyedError) throw blockedError('revoked');
    throw error;
  }
  const reachesEnd = !wanted || wanted.end >= size - 1;
  const stream = spentOnLastByte(content, reachesEnd, (bytes, completed) => uses.endLinkUse(use, bytes, completed));
  const headers: Record<string, string> = {
    'Content-Type': transfer.encryption_mode === 'e2e' ? 'application/octet-stream' : file.mime_type,
    'Content-Disposition': contentDisposition(file.name),
    'Accept-Ranges': 'bytes',
    'Cache-Control': 'private, no-store',
    ...DOWNLOAD_SAFETY_HEADERS,
  };
  if (!wanted) return { status: 200, stream, headers: { ...headers, 'Content-Length': String(size) } };
  return {
    status: 206,
    stream,
    headers: {
      ...headers,
      'Content-Length': String(wanted.end - wanted.start + 1),
      'Content-Range': `bytes ${wanted.start}-${wanted.end}/${size}`,
    },
  };
}

function linkExpired() {
  return apiError('forbidden', 'This download link has expired. Ask the share page for a new one.', {
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
