import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { pipeline, type Readable, Transform } from 'node:stream';
import { verifyPassword } from '../crypto/password.ts';
import { signToken, verifyToken } from '../crypto/signed-token.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { createShareQueries, WHOLE_LINK } from '../db/queries/shares.ts';
import { createTransferQueries, type FileRow, type TransferRow } from '../db/queries/transfers.ts';
import { apiError } from '../errors.ts';
import { type ByteRange, contentDisposition, parseRange } from '../http/range.ts';
import { normaliseIp } from '../net/ip-allow-list.ts';
import type { Services } from '../services.ts';
import { ContentDestroyedError, openContent } from './content.ts';
import { eventView } from './create.ts';
import { scanWarning } from './present.ts';

// What a recipient holding a share link can do: see the transfer, unlock it
// with its password, obtain short-lived download links, and download.
// docs/transfers.md ("Download", "Passwords", "Download links") says the same
// for people.

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

/** The sentence shown for a blocked state. */
export const blockedMessage = (reason: Blocked): string => MESSAGES[reason];

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

/** Why a transfer is over for good (410 and nothing else is shown), or null while it is not. */
export function endedReason(transfer: TransferRow): Blocked | null {
  const reason = blockedReason(transfer);
  return reason && GONE.has(reason) ? reason : null;
}

/**
 * The recipient's view: no owner, workspace or recipient details. Behind a
 * password, nothing about the content (title, names, sizes, types, checksums)
 * until it is unlocked: `transfer_title` and `files` are null.
 */
export function presentShared(transfer: TransferRow, files: readonly FileRow[], unlocked = false) {
  const blocked = blockedReason(transfer);
  const open = unlocked || transfer.password_hash === null;
  return {
    object: 'shared_transfer' as const,
    short_code: transfer.short_code,
    transfer_title: open ? transfer.transfer_title : null,
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
    files: open
      ? files.map((f) => ({ id: f.id, name: f.name, size: f.size, mime_type: f.mime_type, sha256: f.sha256 }))
      : null,
  };
}

export type SharedView = ReturnType<typeof presentShared>;

/** `GET /v1/shares/{code}`: an ended transfer is 410 with its reason, nothing more. */
export async function viewShared(services: Services, shortCode: string): Promise<SharedView> {
  const { transfer, files } = await findShared(services, shortCode);
  const ended = endedReason(transfer);
  if (ended) throw blockedError(ended);
  return presentShared(transfer, files);
}

/** `POST /v1/shares/{code}/unlock`: the password opens the whole view. Counts no download. */
export async function unlockShared(
  services: Services,
  shortCode: string,
  password: string | undefined,
  requester: Requester,
): Promise<SharedView> {
  return (await unlockWithProof(services, shortCode, password, requester)).view;
}

/** The same, with a 15-minute proof of the password for the share page's form (no JavaScript there). */
export async function unlockWithProof(
  services: Services,
  shortCode: string,
  password: string | undefined,
  requester: Requester,
): Promise<{ view: SharedView; unlock: string }> {
  const { transfer, files } = await findShared(services, shortCode);
  const ended = endedReason(transfer);
  if (ended) throw blockedError(ended);
  await checkPassword(services, transfer, password, requester);
  return { view: presentShared(transfer, files, true), unlock: unlockToken(services, transfer) };
}

// ---- Passwords ----

/** The rule for share passwords, checked when a transfer is created (docs/transfers.md, "Passwords"). */
export const SHARE_PASSWORD_RULE = { minLength: 10, minDistinct: 5, maxLength: 256 } as const;

/** What is wrong with a share password, or null when it follows SHARE_PASSWORD_RULE. Counts Unicode characters. */
export function sharePasswordProblem(password: string): string | null {
  const characters = [...password.normalize('NFC')];
  if (characters.length < SHARE_PASSWORD_RULE.minLength) {
    return `must be at least ${SHARE_PASSWORD_RULE.minLength} characters long`;
  }
  if (new Set(characters).size < SHARE_PASSWORD_RULE.minDistinct) {
    return `must use at least ${SHARE_PASSWORD_RULE.minDistinct} different characters`;
  }
  return null;
}

const ATTEMPT_WINDOW_MS = 15 * 60_000;

/** Whose guesses are counted together: an IPv4 address, or the /64 of an IPv6 address (one subscriber's network). */
export function clientKeyOf(ip: string): string {
  const address = normaliseIp(ip).split('%')[0] ?? '';
  if (isIP(address) !== 6) return address;
  const [head = '', tail] = address.toLowerCase().split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const zeros: string[] = Array.from({ length: Math.max(0, 8 - front.length - back.length) }, () => '0');
  const all = [...front, ...zeros, ...back];
  return `${all
    .slice(0, 4)
    .map((g) => g.padStart(4, '0'))
    .join(':')}::/64`;
}

class LinkCeilingReached extends Error {}

/**
 * Checks a share password. Each attempt is counted before the password is
 * verified, in one transaction that increments (or refuses) the counter of
 * the client's address and then that of the whole link, so parallel guesses
 * cannot outrun the limits. A correct password gives its attempt back.
 *
 * - an address has PASSWORD_ATTEMPTS_PER_15_MIN attempts per link and window;
 * - past PASSWORD_LINK_ATTEMPTS_PER_15_MIN on the link, only an address's first
 *   attempt of the window is heard: a distributed guesser gets one guess per
 *   address, and a recipient who has not failed is never refused.
 */
async function checkPassword(
  services: Services,
  transfer: TransferRow,
  password: string | undefined,
  requester: Requester,
): Promise<void> {
  const hash = transfer.password_hash;
  if (!hash) return;
  const { passwordAttemptsPer15Min, passwordLinkAttemptsPer15Min } = services.config.transfers;
  const now = Date.now();
  const windowStart = new Date(now - (now % ATTEMPT_WINDOW_MS));
  const window = { transferId: transfer.id, clientKey: clientKeyOf(requester.ip), windowStart };
  let heard: 'yes' | 'address' | 'link';
  try {
    heard = await services.db.transaction(async (tx) => {
      const shares = createShareQueries(tx);
      const own = await shares.countAttempt(window, passwordAttemptsPer15Min);
      if (own === null) return 'address' as const;
      const all = await shares.countAttempt(
        { ...window, clientKey: WHOLE_LINK },
        passwordLinkAttemptsPer15Min,
        own === 1,
      );
      // Rolls the address's increment back: a refused attempt is not an attempt.
      if (all === null) throw new LinkCeilingReached();
      return 'yes' as const;
    });
  } catch (error) {
    if (!(error instanceof LinkCeilingReached)) throw error;
    heard = 'link';
  }
  const shares = createShareQueries(services.db);
  await shares.forgetOldWindows(transfer.id, windowStart);
  if (heard !== 'yes') {
    const retryAfter = Math.max(1, Math.ceil((windowStart.getTime() + ATTEMPT_WINDOW_MS - Date.now()) / 1000));
    throw apiError(
      'rate_limited',
      heard === 'address'
        ? 'Too many wrong passwords from your address for this link. Try again later.'
        : 'Too many wrong passwords for this link. Try again later.',
      { headers: { 'Retry-After': String(retryAfter) }, details: { reason: 'password_attempts' } },
    );
  }
  if (password && (await verifyPassword(password, hash))) {
    await shares.giveBackAttempt(window);
    return;
  }
  const tenant = { workspaceId: transfer.workspace_id, environment: transfer.environment };
  await createEventQueries(services.db).record(tenant, 'transfer.password_failed', {
    transfer: eventView(transfer),
    ip_address: requester.ip,
  });
  throw apiError('forbidden', password ? 'The password is not correct.' : 'This transfer needs its password.', {
    param: 'password',
    details: { reason: 'password_required' },
  });
}

const UNLOCK_SECONDS = 15 * 60;

/** For the share page without JavaScript: proof that this browser gave the password, for 15 minutes. */
function unlockToken(services: Services, transfer: { id: string }): string {
  return signToken(services.keys.links, 'unlock', { t: transfer.id }, new Date(Date.now() + UNLOCK_SECONDS * 1000));
}

/** Whether `token` (from unlockWithProof) proves the password of this transfer. */
export function unlockedBy(services: Services, transfer: TransferRow, token: string | undefined): boolean {
  if (!token) return false;
  const check = verifyToken(services.keys.links, 'unlock', token);
  return check.ok && check.data.t === transfer.id;
}

export type Requester = { ip: string; userAgent: string | null };

/**
 * Checks the password, counts one download (atomically against max_downloads)
 * and returns a short-lived link per file. One call is one download of the
 * transfer, whatever the number of files fetched with the links. The call is
 * one grant: each of its links serves its file until the last byte has been
 * sent once (openDownload).
 */
export async function issueDownloadLinks(
  services: Services,
  shortCode: string,
  input: { password?: string | undefined; file_id?: string | undefined; unlock?: string | undefined },
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
  const range = parseRange(rangeHeader, file.size);
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
