// The GDPR family's own closed sets of words (lib/vocabulary.ts says how they are used), named in the
// family's declaration as the vocabularies of their CHECK constraints.

/**
 * A GDPR export (docs/gdpr.md): `queued` until its workflow starts collecting, `running` while it
 * collects family by family, `completed` once sealed in the object store (downloadable), `failed`
 * for good, `expired` once its retention ended and its object was deleted.
 */
export const GDPR_EXPORT_STATUSES = ['queued', 'running', 'completed', 'failed', 'expired'] as const;
export type GdprExportStatus = (typeof GDPR_EXPORT_STATUSES)[number];
