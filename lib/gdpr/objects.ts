import type { GdprExportRow } from '../db/queries/gdpr-exports.ts';

// Where an export's objects are: under its tenant's prefix, as every object of the bucket, so that
// a listing of a tenant's prefix finds them, and all of an export's objects go with its prefix.

type ExportPlace = Pick<GdprExportRow, 'id' | 'workspace_id' | 'environment'>;

/** The prefix of every object of one export: its document, and its parts while it is collected. */
export const exportPrefix = (row: ExportPlace) => `${row.environment}/${row.workspace_id}/gdpr-exports/${row.id}/`;
export const exportObjectKey = (row: ExportPlace) => `${exportPrefix(row)}export`;
export const partObjectKey = (row: ExportPlace, family: string) => `${exportPrefix(row)}parts/${family}`;
