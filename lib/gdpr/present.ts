import type { GdprExportRow } from '../db/queries/gdpr-exports.ts';
import type { GdprExportStatus } from './vocabulary.ts';

export type GdprExport = {
  object: 'gdpr_export';
  id: string;
  status: GdprExportStatus;
  user_id: string | null;
  requested_by: string;
  environment: string;
  current_family: string | null;
  families_done: number;
  families_total: number;
  size: number | null;
  error: string | null;
  created_at: string;
  completed_at: string | null;
  expires_at: string | null;
  download_url: string | null;
  download_expires_at: string | null;
};

export type DownloadLink = { url: string; expiresAt: Date };

export function presentExport(row: GdprExportRow, link: DownloadLink | null): GdprExport {
  return {
    object: 'gdpr_export',
    id: row.id,
    status: row.status,
    user_id: row.subject_user_id,
    requested_by: row.requested_by,
    environment: row.environment,
    current_family: row.current_family,
    families_done: row.families_done,
    families_total: row.families_total,
    size: row.status === 'completed' ? row.size : null,
    error: row.error,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
    expires_at: (row.expired_at ?? row.retention_until)?.toISOString() ?? null,
    download_url: link?.url ?? null,
    download_expires_at: link?.expiresAt.toISOString() ?? null,
  };
}

/** The export as events carry it: no link, no content. */
export function exportEventView(row: GdprExportRow) {
  return { id: row.id, status: row.status, user_id: row.subject_user_id, requested_by: row.requested_by };
}
