import type { Readable } from 'node:stream';
import { verifyPassword } from '../crypto/password.ts';
import { signToken, verifyToken } from '../crypto/signed-token.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { createTransferQueries, type FileRow, type TransferRow } from '../db/queries/transfers.ts';
import { apiError } from '../errors.ts';
import { type ByteRange, contentDisposition, parseRange } from '../http/range.ts';
import type { Services } from '../services.ts';
import { ContentDestroyedError, openContent } from './content.ts';
import { eventView } from './create.ts';
import { scanWarning } from './present.ts';

// What a recipient holding a share link can do: see the transfer, unlock it
// with its password, obtain short-lived download links, and download.

/** Why a transfer cannot be downloaded right now, or null when it can. */
export const BLOCKED_REASONS = [
  'uploading',
  'scanning',
  'awaiting_approval',
  'rejected',
  'limit_reached',
  'expired',
  'revoked',
  'infected',
  'upload_incomplete',
] as const;
export type Blocked = (typeof BLOCKED_REASONS)[number];

const GONE: ReadonlySet<Blocked> = new Set(['expired', 'revoked', 'infected', 'upload_incomplete']);

const MESSAGES: Record<Blocked, string> = {
  uploading: 'The sender is still uploading these files.',
  scanning: 'These files are being checked for malware. Try again in a moment.',
  awaiting_approval: 'This transfer is waiting for approval.',
  rejected: 'This transfer was not approved.',
  limit_reached: 'This transfer has reached its download limit.',
  expired: 'This transfer has expired.',
  revoked: 'The sender has deleted this transfer.',
  infected: 'This transfer was removed because a file contained malware.',
  upload_incomplete: 'The upload was never completed, so the transfer was removed.',
};

export function blockedReason(transfer: TransferRow, nowMs = Date.now()): Blocked | null {
  if (transfer.status === 'expired' || (transfer.status === 'active' && transfer.expires_at.getTime() <= nowMs)) {
    return 'expired';
  }
  if (transfer.status === 'deleted') {
    const reason = transfer.status_reason;
    return reason === 'infected' || reason === 'upload_incomplete' ? reason : 'revoked';
  }
  if (transfer.status === 'scanning') return transfer.status_reason === 'uploading' ? 'uploading' : 'scanning';
  if (transfer.approval_status === 'pending') return 'awaiting_approval';
  if (transfer.approval_status === 'rejected') return 'rejected';
  if (transfer.max_downloads !== null && transfer.total_downloads >= transfer.max_downloads) return 'limit_reached';
  return null;
}

export function blockedError(reason: Blocked) {
  return GONE.has(reason)
    ? apiError('not_found', MESSAGES[reason], { status: 410, details: { reason } })
    : apiError('forbidden', MESSAGES[reason], { details: { reason } });
}

export async function findShared(services: Services, shortCode: string) {
  const queries = createTransferQueries(services.db);
  const transfer = await queries.findByShortCode(shortCode);
  if (!transfer) throw apiError('not_found', 'No transfer at this link.');
  return { transfer, files: await queries.files(transfer.id) };
}

/** The recipient's view: no owner, workspace or recipient details. */
export function presentShared(transfer: TransferRow, files: readonly FileRow[]) {
  const blocked = blockedReason(transfer);
  return {
    object: 'shared_transfer' as const,
    short_code: transfer.short_code,
    transfer_title: transfer.transfer_title,
    status: transfer.status,
    available: blocked === null,
    blocked_reason: blocked,
    message: blocked ? MESSAGES[blocked] : null,
    scan_warning: scanWarning(transfer),
    encryption_mode: transfer.encryption_mode,
    password_required: transfer.password_hash !== null,
    expires_at: transfer.expires_at,
    downloads_remaining:
      transfer.max_downloads === null ? null : Math.max(0, transfer.max_downloads - transfer.total_downloads),
    files: files.map((f) => ({ id: f.id, name: f.name, size: f.size, mime_type: f.mime_type, sha256: f.sha256 })),
  };
}

export type Requester = { ip: string; userAgent: string | null };

/**
 * Checks the password, counts one download (atomically against max_downloads)
 * and returns a short-lived link per file. One call is one download of the
 * transfer, whatever the number of files fetched with the links.
 */
export async function issueDownloadLinks(
  services: Services,
  shortCode: string,
  input: { password?: string | undefined; file_id?: string | undefined },
  requester: Requester,
) {
  const { transfer, files } = await findShared(services, shortCode);
  const blocked = blockedReason(transfer);
  if (blocked) throw blockedError(blocked);
  const tenant = { workspaceId: transfer.workspace_id, environment: transfer.environment };
  const events = createEventQueries(services.db);
  if (transfer.password_hash) {
    const window = new Date(Date.now() - 15 * 60_000);
    const failures = await events.countForTransfer('transfer.password_failed', transfer.id, window);
    if (failures >= services.config.transfers.passwordAttemptsPer15Min) {
      throw apiError('rate_limited', 'Too many wrong passwords for this transfer. Try again later.', {
        headers: { 'Retry-After': '900' },
      });
    }
    if (!input.password || !(await verifyPassword(input.password, transfer.password_hash))) {
      await events.record(tenant, 'transfer.password_failed', {
        transfer: eventView(transfer),
        ip_address: requester.ip,
      });
      throw apiError(
        'forbidden',
        input.password ? 'The password is not correct.' : 'This transfer needs its password.',
        {
          param: 'password',
          details: { reason: 'password_required' },
        },
      );
    }
  }
  const wanted = input.file_id ? files.filter((f) => f.id === input.file_id) : files;
  if (wanted.length === 0) throw apiError('not_found', 'No such file in this transfer.', { param: 'file_id' });

  const counted = await services.db.transaction(async (tx) => {
    const queries = createTransferQueries(tx);
    const row = await queries.countDownload(transfer.id);
    if (!row) return null;
    await queries.recordDownload(transfer.id, requester.ip, requester.userAgent?.slice(0, 512) ?? null);
    const txEvents = createEventQueries(tx);
    const data = { transfer: eventView(row), total_downloads: row.total_downloads };
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
  return {
    object: 'download_links' as const,
    total_downloads: counted.total_downloads,
    files: wanted.map((file) => ({
      file_id: file.id,
      name: file.name,
      size: file.size,
      download_url: `${services.config.api.publicBaseUrl}/v1/downloads/${signToken(services.keys.links, 'download', { f: file.id, t: transfer.id }, expiresAt)}`,
      download_expires_in: seconds,
    })),
  };
}

export type Download = {
  status: 200 | 206;
  stream: Readable;
  headers: Record<string, string>;
};

/** Streams one file for a download link; a Range fetches and decrypts only the segments it needs. */
export async function openDownload(
  services: Services,
  token: string,
  rangeHeader: string | undefined,
): Promise<Download> {
  const check = verifyToken(services.keys.links, 'download', token);
  if (!check.ok) {
    throw check.reason === 'expired'
      ? apiError('forbidden', 'This download link has expired. Ask the share page for a new one.', {
          details: { reason: 'link_expired' },
        })
      : apiError('not_found', 'No such download link.');
  }
  const queries = createTransferQueries(services.db);
  const [transfer, file] = await Promise.all([queries.findById(check.data.t ?? ''), queries.file(check.data.f ?? '')]);
  if (!transfer || !file || file.transfer_id !== transfer.id) throw apiError('not_found', 'No such download link.');
  // The link was issued when the transfer was downloadable; it must still be (revocation and expiry are immediate).
  const blocked = blockedReason(transfer);
  if (blocked && blocked !== 'limit_reached') throw blockedError(blocked);

  const range = parseRange(rangeHeader, file.size);
  if (range === 'unsatisfiable') {
    throw apiError('validation_error', 'The requested range is outside the file.', {
      status: 416,
      param: 'Range',
      headers: { 'Content-Range': `bytes */${file.size}` },
    });
  }
  const headers: Record<string, string> = {
    'Content-Type': transfer.encryption_mode === 'e2e' ? 'application/octet-stream' : file.mime_type,
    'Content-Disposition': contentDisposition(file.name),
    'Accept-Ranges': 'bytes',
    'Cache-Control': 'private, no-store',
    'X-Content-Type-Options': 'nosniff',
  };
  const size = transfer.encryption_mode === 'e2e' ? (file.encrypted_size ?? file.size) : file.size;
  const wanted: ByteRange | undefined = range ?? undefined;
  const stream = await openContent(services, file, transfer.encryption_mode, wanted).catch((error: Error) => {
    // Keys destroyed between the check above and now: the transfer just ended.
    if (error instanceof ContentDestroyedError) throw blockedError('revoked');
    throw error;
  });
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
