import { createRecipientQueries, type PersonalLink } from '../db/queries/recipients.ts';
import { createTransferQueries, type FileRow, type TransferRow } from '../db/queries/transfers.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { BlockedReason } from '../vocabulary.ts';
import { transferPhase } from './phase.ts';
import { scanWarning } from './present.ts';
import { checkPassword, type Requester, unlockToken } from './share-passwords.ts';

// What a recipient holding a share link sees: whether the transfer can be
// downloaded now and why not, and, once its password is given, its content.
// Passwords are checked in share-passwords.ts, download links issued and
// served in download-links.ts; docs/transfers.md ("Download", "Passwords",
// "Download links") says the same for people.

const GONE: ReadonlySet<BlockedReason> = new Set([
  'expired',
  'revoked',
  'infected',
  'upload_incomplete',
  'scan_failed',
]);

const MESSAGES: Record<BlockedReason, string> = {
  uploading: 'The sender is still uploading these files.',
  scanning: 'These files are being checked for malware. Try again in a moment.',
  awaiting_approval: 'This transfer is waiting for approval.',
  rejected: 'This transfer was not approved.',
  limit_reached: 'This transfer has reached its download limit.',
  expired: 'This transfer has expired.',
  revoked: 'The sender has deleted this transfer.',
  infected: 'This transfer was removed because a file contained malware.',
  upload_incomplete: 'The upload was never completed, so the transfer was removed.',
  scan_failed: 'These files could not be verified after their upload, so the transfer was removed.',
};

/** What blockedReason reads of a transfer: a row, or a transfer as presented to its owner. */
export type DownloadState = Pick<
  TransferRow,
  'status' | 'status_reason' | 'expires_at' | 'approval_status' | 'max_downloads' | 'total_downloads'
>;

export function blockedReason(transfer: DownloadState, nowMs = Date.now()): BlockedReason | null {
  if (transfer.status === 'expired' || (transfer.status === 'active' && transfer.expires_at.getTime() <= nowMs)) {
    return 'expired';
  }
  if (transfer.status === 'deleted') {
    const reason = transfer.status_reason;
    return reason === 'infected' || reason === 'upload_incomplete' || reason === 'scan_failed' ? reason : 'revoked';
  }
  const phase = transferPhase(transfer);
  if (phase === 'uploading' || phase === 'scanning') return phase;
  if (transfer.approval_status === 'pending') return 'awaiting_approval';
  if (transfer.approval_status === 'rejected') return 'rejected';
  if (transfer.max_downloads !== null && transfer.total_downloads >= transfer.max_downloads) return 'limit_reached';
  return null;
}

/** The sentence shown for a blocked state. */
export const blockedMessage = (reason: BlockedReason): string => MESSAGES[reason];

export function blockedError(reason: BlockedReason) {
  return GONE.has(reason)
    ? new DomainError('not_found', MESSAGES[reason], { kind: 'gone', details: { reason } })
    : new DomainError('forbidden', MESSAGES[reason], { details: { reason } });
}

export type Shared = {
  transfer: TransferRow;
  files: readonly FileRow[];
  /** Set when the code is a recipient's personal link (docs/recipients.md), not the transfer's own. */
  personal: PersonalLink | null;
};

/** The transfer a share code reaches: its own short code, or a recipient's personal code. */
export async function findShared(services: Services, code: string): Promise<Shared> {
  const queries = createTransferQueries(services.db);
  let transfer = await queries.findByShortCode(code);
  const personal = transfer ? null : await createRecipientQueries(services.db).findLinkByCode(code);
  if (personal) transfer = await queries.findById(personal.transfer_id);
  if (!transfer) throw new DomainError('not_found', 'No transfer at this link.');
  return { transfer, files: await queries.files(transfer.id), personal };
}

/** Why a transfer is over for good (a `gone` refusal, nothing else shown), or null while it is not. */
export function endedReason(transfer: TransferRow): BlockedReason | null {
  const reason = blockedReason(transfer);
  return reason && GONE.has(reason) ? reason : null;
}

/**
 * The recipient's view: no owner, workspace or recipient details. Behind a
 * password, nothing about the content (title, names, sizes, types, checksums)
 * until it is unlocked: `transfer_title` and `files` are null. `short_code` is
 * the code the visitor came with, so a personal link's page keeps using it.
 */
export function presentShared(
  transfer: TransferRow,
  files: readonly FileRow[],
  unlocked = false,
  code = transfer.short_code,
) {
  const blocked = blockedReason(transfer);
  const open = unlocked || transfer.password_hash === null;
  return {
    object: 'shared_transfer' as const,
    short_code: code,
    transfer_title: open ? transfer.transfer_title || null : null,
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

/** `GET /v1/shares/{code}`: an ended transfer is refused as `gone` with its reason, nothing more. */
export async function viewShared(services: Services, shortCode: string): Promise<SharedView> {
  const { transfer, files } = await findShared(services, shortCode);
  const ended = endedReason(transfer);
  if (ended) throw blockedError(ended);
  return presentShared(transfer, files, false, shortCode);
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
  return { view: presentShared(transfer, files, true, shortCode), unlock: unlockToken(services, transfer) };
}
