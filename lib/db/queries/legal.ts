import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { LEGAL_LANGUAGES, type LegalLanguage } from '../../legal/vocabulary.ts';
import type { Tenant } from '../../tenancy.ts';
import { sql } from '../sql.ts';

// The published legal documents (global: the same for every workspace) and the audit entries that
// record their acceptance. A document's current version is its newest one in effect: the latest
// `effective_date` not after today, the latest published among versions of one date.

export const legalDocumentRow = z.object({
  id: z.uuid(),
  slug: z.string(),
  language: z.enum(LEGAL_LANGUAGES),
  version: z.string(),
  title: z.string(),
  // A date, not a timestamp: kept as PostgreSQL's YYYY-MM-DD.
  effective_date: z.string(),
  body: z.string(),
  published_at: z.date(),
});
export type LegalDocumentRow = z.infer<typeof legalDocumentRow>;

const columns = sql.fragment`
  d.id, d.slug, d.language, d.version, d.title, to_char(d.effective_date, 'YYYY-MM-DD') AS effective_date, d.body,
  d.published_at`;

export const legalAcceptanceRow = z.object({
  slug: z.string(),
  version: z.string(),
  accepted_at: z.date(),
});
export type LegalAcceptanceRow = z.infer<typeof legalAcceptanceRow>;

export type NewLegalVersion = {
  slug: string;
  language: LegalLanguage;
  version: string;
  title: string;
  effectiveDate: string;
  body: string;
};

export function createLegalQueries(db: CommonQueryMethods) {
  return {
    /** The current version of every document in `language`, by slug. */
    async current(language: LegalLanguage): Promise<readonly LegalDocumentRow[]> {
      return db.any(sql.type(legalDocumentRow)`
        SELECT DISTINCT ON (d.slug) ${columns} FROM legal_documents d
        WHERE d.language = ${language} AND d.effective_date <= current_date
        ORDER BY d.slug, d.effective_date DESC, d.published_at DESC`);
    },

    async currentOne(slug: string, language: LegalLanguage): Promise<LegalDocumentRow | null> {
      return db.maybeOne(sql.type(legalDocumentRow)`
        SELECT ${columns} FROM legal_documents d
        WHERE d.slug = ${slug} AND d.language = ${language} AND d.effective_date <= current_date
        ORDER BY d.effective_date DESC, d.published_at DESC LIMIT 1`);
    },

    /** Publishes a version; null when that slug, language and version exist already. */
    async publish(document: NewLegalVersion): Promise<LegalDocumentRow | null> {
      return db.maybeOne(sql.type(legalDocumentRow)`
        INSERT INTO legal_documents AS d (slug, language, version, title, effective_date, body)
        VALUES (${document.slug}, ${document.language}, ${document.version}, ${document.title},
                ${document.effectiveDate}::date, ${document.body})
        ON CONFLICT (slug, language, version) DO NOTHING
        RETURNING ${columns}`);
    },

    /**
     * The acceptances by `userId` among the tenant's newest `window` audit entries whose action
     * starts with `legal.` (spec: "the newest 500 audit events whose action starts with `legal.`"),
     * newest first: an acceptance older than the window is not seen.
     */
    async acceptances(tenant: Tenant, userId: string, window: number): Promise<readonly LegalAcceptanceRow[]> {
      return db.any(sql.type(legalAcceptanceRow)`
        SELECT newest.metadata->>'slug' AS slug, newest.metadata->>'version' AS version, newest.created_at AS accepted_at
        FROM (
          SELECT actor_id, action, status, metadata, created_at, id FROM audit_log
          WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
            AND action LIKE 'legal.%'
          ORDER BY created_at DESC, id DESC LIMIT ${window}
        ) newest
        WHERE newest.actor_id = ${userId} AND newest.action = 'legal.accepted' AND newest.status = 'success'
          AND newest.metadata ? 'slug' AND newest.metadata ? 'version'
        ORDER BY newest.created_at DESC, newest.id DESC`);
    },
  };
}
