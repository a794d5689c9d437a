import { createHash } from 'node:crypto';
import type { Config } from '../config.ts';
import type { IntakeDocumentRow, IntakeFileRow, IntakeRow } from '../db/queries/intakes.ts';

// How intakes and their documents are answered (docs/intakes.md).

export function intakePageUrl(config: Config, intakeId: string): string {
  return `${config.api.publicBaseUrl}/i/${intakeId}`;
}

/**
 * The link to hand to submitters: the page with a publishable key in its fragment, which browsers
 * never send to the server (so it is in no request line and no log).
 */
export function intakePageLink(config: Config, intakeId: string, publishableKey: string): string {
  return `${intakePageUrl(config, intakeId)}#k=${publishableKey}`;
}

export function presentOwnerKey(intake: IntakeRow) {
  if (!intake.owner_kem || !intake.owner_public_key) return null;
  return {
    kem: intake.owner_kem,
    public_key: intake.owner_public_key.toString('base64url'),
    // What a person compares with the fingerprint `valise intake keygen` printed.
    fingerprint: createHash('sha256').update(intake.owner_public_key).digest('hex').slice(0, 32),
  };
}

/** The submissions an intake takes per hour and per day: its own, or the configured default. */
export function submissionBudget(config: Config, intake: IntakeRow) {
  return {
    submissions_per_hour: intake.submissions_per_hour ?? config.intakes.submissionsPerHour,
    submissions_per_day: intake.submissions_per_day ?? config.intakes.submissionsPerDay,
  };
}

export function presentIntake(config: Config, intake: IntakeRow) {
  return {
    id: intake.id,
    object: 'intake' as const,
    title: intake.title,
    instructions: intake.instructions,
    status: intake.status,
    closed_reason: intake.closed_reason,
    encryption_mode: intake.encryption_mode,
    owner_public_key: presentOwnerKey(intake),
    metadata_policy: intake.metadata_policy,
    retention_hours: intake.retention_hours,
    limits: {
      max_files: intake.max_files,
      max_bytes: intake.max_bytes,
      max_submissions: intake.max_submissions,
      ...submissionBudget(config, intake),
    },
    notify: intake.notify_emails,
    expires_at: intake.expires_at,
    submissions_count: intake.submissions_count,
    page_url: intakePageUrl(config, intake.id),
    created_at: intake.created_at,
    updated_at: intake.updated_at,
    closed_at: intake.closed_at,
  };
}

/** What a submitter's page needs to know, and nothing of the owner's other settings. */
export function presentForm(intake: IntakeRow) {
  return {
    object: 'intake_form' as const,
    id: intake.id,
    title: intake.title,
    instructions: intake.instructions,
    status: intake.status,
    encryption_mode: intake.encryption_mode,
    owner_public_key: presentOwnerKey(intake),
    metadata_policy: intake.metadata_policy,
    limits: { max_files: intake.max_files, max_bytes: intake.max_bytes },
    expires_at: intake.expires_at,
  };
}

export type DownloadLink = { url: string; expiresIn: number } | null;

/** The spec's Intake document; `links` gives each downloadable file its fresh URL. */
export function presentDocument(
  intake: IntakeRow,
  document: IntakeDocumentRow,
  files: readonly IntakeFileRow[],
  links: ReadonlyMap<string, DownloadLink>,
) {
  const envelope =
    document.wrapped_symmetric_key && document.chunk_size
      ? { wrapped_symmetric_key: document.wrapped_symmetric_key, chunk_size: document.chunk_size }
      : null;
  const scanned = files.map((file) => file.scan_status);
  return {
    id: document.id,
    object: 'intake_document' as const,
    intake_id: document.intake_id,
    client_reference: document.client_reference,
    // Spec: present only under metadata_policy `allow`; a document stored under `deny` has none.
    ...(intake.metadata_policy === 'allow' ? { metadata: document.metadata ?? {} } : {}),
    status: document.status,
    files_count: files.length,
    total_size_bytes: files.reduce((sum, file) => sum + (file.encrypted_size ?? 0), 0),
    encrypted: true,
    source: document.source,
    envelope,
    encryption: {
      mode: intake.encryption_mode,
      kem: document.kem,
      files: Object.fromEntries(files.map((file) => [file.name, { iv: file.iv }])),
      chunk_size: document.chunk_size,
      wrapped_symmetric_key: document.wrapped_symmetric_key,
    },
    files: files.map((file) => {
      const link = links.get(file.id) ?? null;
      return {
        id: file.id,
        name: file.name,
        size_bytes: file.plaintext_size,
        encrypted_size_bytes: file.encrypted_size,
        iv: file.iv,
        display_mime: file.mime_type,
        upload_state: file.upload_state,
        scan_status: file.scan_status,
        download_url: link?.url ?? null,
        download_expires_in: link?.expiresIn ?? null,
      };
    }),
    scan_status: scanSummary(intake, scanned),
    created_at: document.created_at,
    received_at: document.received_at,
    retention_until: document.retention_until,
  };
}

/** One word for the document's files: end-to-end documents cannot be scanned, and say so. */
function scanSummary(intake: IntakeRow, statuses: readonly IntakeFileRow['scan_status'][]) {
  if (intake.encryption_mode === 'e2e_asym') return 'not_scanned_e2e';
  if (statuses.includes('infected')) return 'infected';
  if (statuses.some((status) => status === null || status === 'pending')) return 'pending';
  if (statuses.includes('not_scanned_too_large')) return 'not_scanned_too_large';
  return 'clean';
}
