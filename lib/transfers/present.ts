import type { Config } from '../config.ts';
import type { TransferRecipientRow } from '../db/queries/recipients.ts';
import type { FileRow, TransferRow } from '../db/queries/transfers.ts';

export function shareUrl(config: Config, shortCode: string): string {
  return `${config.api.publicBaseUrl}/t/${shortCode}`;
}

/**
 * What a recipient is told about content the malware scan could not read
 * (docs/transfers.md, "Files too large to scan"); null when there is nothing to say.
 */
export function scanWarning(transfer: Pick<TransferRow, 'scan_status'>): string | null {
  return transfer.scan_status === 'not_scanned_too_large'
    ? 'Some of these files were too large to be checked for malware. Open them only if you trust the sender.'
    : null;
}

/**
 * A transfer's recipient as its owner sees it, with the personal link to copy (docs/recipients.md).
 * The link is a capability: it appears in the owner's API answers only, never in events or audit.
 */
export function presentTransferRecipient(config: Config, link: TransferRecipientRow) {
  return {
    object: 'transfer_recipient' as const,
    recipient_id: link.recipient_id,
    email: link.email,
    share_url: shareUrl(config, link.share_code),
    mailed_at: link.mailed_at,
    downloads_completed: link.downloads_completed,
    last_downloaded_at: link.last_downloaded_at,
    files_downloaded: link.files_downloaded,
  };
}

export type PresentedTransferRecipient = ReturnType<typeof presentTransferRecipient>;

export function presentFile(file: FileRow) {
  return {
    id: file.id,
    object: 'transfer_file' as const,
    name: file.name,
    size: file.size,
    mime_type: file.mime_type,
    upload_state: file.upload_state,
    bytes_received: file.bytes_received,
    sha256: file.sha256,
    scan_status: file.scan_status,
  };
}

/**
 * A transfer as its owner sees it, with its recipients' personal links. Never the password hash or
 * any key material.
 */
export function presentTransfer(
  config: Config,
  transfer: TransferRow,
  files: readonly FileRow[],
  recipients: readonly PresentedTransferRecipient[],
) {
  return {
    id: transfer.id,
    object: 'transfer' as const,
    short_code: transfer.short_code,
    // Transfers created with "" before it was stored as no title: shown as none too.
    transfer_title: transfer.transfer_title || null,
    status: transfer.status,
    status_reason: transfer.status_reason,
    encryption_mode: transfer.encryption_mode,
    scan_status: transfer.scan_status,
    expires_at: transfer.expires_at,
    total_downloads: transfer.total_downloads,
    max_downloads: transfer.max_downloads,
    password_protected: transfer.password_hash !== null,
    recipient: transfer.recipient,
    recipients: [...recipients],
    share_url: shareUrl(config, transfer.short_code),
    approval_required: transfer.approval_required,
    approval_status: transfer.approval_status,
    approved_at: transfer.approved_at,
    approved_by: transfer.approved_by,
    approval_note: transfer.approval_note,
    folder_id: transfer.folder_id,
    tags: transfer.tags,
    archived_at: transfer.archived_at,
    allowed_countries: transfer.allowed_countries,
    workspace_id: transfer.workspace_id,
    user_id: transfer.user_id,
    created_at: transfer.created_at,
    files: files.map(presentFile),
  };
}

export type PresentedTransfer = ReturnType<typeof presentTransfer>;
