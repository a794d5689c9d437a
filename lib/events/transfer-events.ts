import { z } from 'zod';
import { DOWNLOAD_PATHS } from '../transfers/vocabulary.ts';
import { type ApprovalDecision, BLOCKED_REASONS, SCAN_FAILURES, SCAN_STATUSES } from '../vocabulary.ts';
import { EMITTED, event } from './define.ts';
import { linkRecipient } from './recipient-events.ts';
import { TransferCreatedView, TransferEventView as transfer } from './views.ts';

// transfer.*: what the API and the transfer workflow record about a transfer.

const approvedBy = z.uuid().describe('User id of the deciding caller.');
const approvalNote = z.string().nullable().describe('The approval note.');
const ipAddress = z.string().describe('Address of the client that made the attempt.');
const ruleId = (what: string) => z.uuid().describe(`The rule whose action ${what}.`);
const causeEventId = z.string().describe('The event that set the rule off.');
const viaPersonalLink = linkRecipient
  .optional()
  .describe("Present when the download came through a recipient's personal link (docs/recipients.md).");
const downloaderCountry = z
  .string()
  .nullable()
  .describe(
    'ISO 3166-1 alpha-2 country of the downloading client address, from an offline database; null when not known (a private address, one not in the database).',
  );

export const TRANSFER_EVENTS = {
  'transfer.created': event(
    'A transfer was created (`POST /v1/transfers`); its files are not uploaded yet, so `status` is `scanning`.',
    { transfer: TransferCreatedView },
    EMITTED,
  ),
  'transfer.e2e_created': event(
    'An end-to-end encrypted transfer was created. Fires right after `transfer.created`, with the same payload.',
    { transfer: TransferCreatedView },
    EMITTED,
  ),
  'transfer.scanned': event(
    'Every file of the transfer was verified and scanned. Fires once; an infected transfer is already `deleted`.',
    {
      transfer,
      scan_status: z
        .enum(SCAN_STATUSES)
        .exclude(['pending'])
        .describe(
          'The verdict: `not_scanned_too_large` when a file exceeds what the scanner reads (the transfer is active, with a warning); `not_scanned_e2e` for ciphertext.',
        ),
    },
    EMITTED,
  ),
  'transfer.scan_clean': event(
    'The scan found nothing and the transfer became `active`. Fires after `transfer.scanned` when the verdict is `clean`.',
    { transfer },
    EMITTED,
  ),
  'transfer.scan_too_large': event(
    'Some files were too large for the malware scanner to read whole: the transfer became `active` with `scan_status` `not_scanned_too_large`, and its recipient is warned. Fires after `transfer.scanned`.',
    {
      transfer,
      files: z
        .array(z.object({ id: z.uuid().describe('The file id.'), size: z.int().min(0).describe('Its size in bytes.') }))
        .describe('The files that were not scanned.'),
    },
    EMITTED,
  ),
  'transfer.scan_infected': event(
    'A file matched a malware signature: the transfer was deleted (`status_reason` `infected`) and its content destroyed.',
    {
      transfer,
      signatures: z
        .array(z.string().describe('A malware signature name.'))
        .describe('The signature of each infected file.'),
    },
    EMITTED,
  ),
  'transfer.scan_failed': event(
    'A file could not be verified for good (its content no longer matches its upload): the transfer was deleted ' +
      '(`status_reason` `scan_failed`), its keys and content destroyed, and its owner told by mail.',
    {
      transfer,
      file_id: z.uuid().describe('The file that failed.'),
      failure: z
        .enum(SCAN_FAILURES)
        .describe(
          'What failed: `checksum_mismatch` (the plaintext differs from the upload checksum), `content_corrupt` (the stored ciphertext fails authentication), `size_mismatch` (the stored object is not the size uploaded), `other`.',
        ),
    },
    EMITTED,
  ),
  'transfer.approval_requested': event(
    'A transfer that requires approval became active with no decision yet and waits for one (`POST /v1/transfers/{id}/approve`). Not emitted when the decision was taken while it uploaded or scanned.',
    { transfer },
    EMITTED,
  ),
  'transfer.approved': event(
    'A transfer in the approval circuit was approved, at any point of its life; it can be downloaded once active.',
    { transfer, approved_by: approvedBy, note: approvalNote },
    EMITTED,
  ),
  'transfer.rejected': event(
    'A transfer in the approval circuit was rejected; downloads stay blocked.',
    { transfer, approved_by: approvedBy, note: approvalNote },
    EMITTED,
  ),
  'transfer.downloaded': event(
    'A recipient obtained download links (`POST /v1/shares/{short_code}/download-links`): one download counted.',
    {
      transfer,
      total_downloads: z.int().min(1).describe('Downloads counted so far, this one included.'),
      recipient: viaPersonalLink,
      country_code: downloaderCountry,
    },
    EMITTED,
  ),
  'transfer.first_download': event(
    'The first download of a transfer. Fires with, and after, the `transfer.downloaded` it accompanies.',
    {
      transfer,
      total_downloads: z.int().min(1).describe('Always 1.'),
      recipient: viaPersonalLink,
      country_code: downloaderCountry,
    },
    EMITTED,
  ),
  'transfer.limit_reached': event(
    'The download that reached `max_downloads`; later attempts are refused (`limit_reached`).',
    {
      transfer,
      total_downloads: z.int().min(1).describe('Equal to the transfer `max_downloads`.'),
      recipient: viaPersonalLink,
      country_code: downloaderCountry,
    },
    EMITTED,
  ),
  'transfer.password_failed': event(
    'A download attempt on a password-protected transfer came with a missing or wrong password.',
    { transfer, ip_address: ipAddress },
    EMITTED,
  ),
  'transfer.geo_blocked': event(
    'A download attempt on a transfer restricted to countries (`allowed_countries`) came from elsewhere, or from an address whose country is not known; it was refused (403 `forbidden`, `reason: geo_blocked`) and nothing was counted.',
    {
      transfer,
      ip_address: ipAddress,
      country_code: downloaderCountry,
      path: z
        .enum(DOWNLOAD_PATHS)
        .describe(
          'The way the download was attempted: `download_links`, `share_page`, `archive_link`, `file` (a download link) or `archive` (an archive link).',
        ),
      recipient: viaPersonalLink,
    },
    EMITTED,
  ),
  'transfer.expired': event(
    'The transfer reached `expires_at`: it is `expired`, its keys and content destroyed.',
    { transfer, reason: z.enum(BLOCKED_REASONS).extract(['expired']).describe('Always `expired`.') },
    EMITTED,
  ),
  'transfer.deleted': event(
    'The transfer was deleted and its keys destroyed: revoked by its sender (`DELETE /v1/transfers/{id}`), or ' +
      'its files did not all arrive before the upload deadline. (Infected transfers fire `transfer.scan_infected`, ' +
      'transfers whose files could not be verified `transfer.scan_failed`.)',
    {
      transfer,
      reason: z.enum(BLOCKED_REASONS).extract(['revoked', 'upload_incomplete']).describe('Why it was deleted.'),
    },
    EMITTED,
  ),
  'transfer.expiry_extended': event(
    'An `extend_expiry` automation rule moved `expires_at` later (capped at the longest expiry allowed).',
    {
      transfer,
      previous_expires_at: z.iso.datetime().describe('The expiry before the extension.'),
      rule_id: ruleId('extended it'),
      cause_event_id: causeEventId,
    },
    EMITTED,
  ),
  'transfer.archived': event(
    'An `archive_transfer` automation rule archived the transfer: it left the default list, its link still works.',
    { transfer, rule_id: ruleId('archived it'), cause_event_id: causeEventId },
    EMITTED,
  ),
};

/** What an approver's decision records. */
export const APPROVAL_EVENTS = {
  approved: 'transfer.approved',
  rejected: 'transfer.rejected',
} as const satisfies Record<ApprovalDecision, keyof typeof TRANSFER_EVENTS>;
