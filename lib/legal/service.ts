import type { DatabasePool } from 'slonik';
import { createEventQueries } from '../db/queries/events.ts';
import { createLegalQueries, type LegalDocumentRow, type NewLegalVersion } from '../db/queries/legal.ts';
import { DomainError, notFound } from '../errors.ts';
import type { ListEnvelope } from '../pagination.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';

// Valise's legal documents (docs/legal.md): published in French, every version kept, the current
// one being the newest in effect. A user accepts the current version of one; the acceptance is an
// audit entry (`legal.accepted`, its slug and version in the metadata, written by the route) read
// back by GET /v1/gdpr/acceptances, so a new version makes earlier acceptances outdated.

/** The language the spec publishes legal documents in. */
export const LEGAL_LANGUAGE = 'fr' as const;

/** Spec (Limits): the acceptances are read from the newest 500 legal audit events. */
export const ACCEPTANCE_SCAN_WINDOW = 500;

export type LegalDocumentSummary = {
  object: 'legal_document';
  slug: string;
  title: string;
  version: string;
  effective_date: string;
  language: 'fr';
  url: string;
};
export type LegalDocument = LegalDocumentSummary & { body: string; published_at: string };

export type AcceptLegalInput = { slug: string; version: string };
export type LegalAcceptance = {
  object: 'legal_acceptance';
  slug: string;
  version: string;
  user_id: string;
  accepted_at: string;
};

export type LegalAcceptanceEntry = {
  slug: string;
  title: string;
  current_version: string;
  effective_date: string;
  accepted_version: string | null;
  accepted_at: string | null;
  up_to_date: boolean;
};
export type LegalAcceptanceList = ListEnvelope<LegalAcceptanceEntry> & {
  summary: {
    total_documents: number;
    accepted_up_to_date: number;
    acceptance_outdated: number;
    never_accepted: number;
  };
};

/** `baseUrl`: the API's public address, or '' for a path (the operator's command has none to give). */
function presentSummary(baseUrl: string, row: LegalDocumentRow): LegalDocumentSummary {
  return {
    object: 'legal_document',
    slug: row.slug,
    title: row.title,
    version: row.version,
    effective_date: row.effective_date,
    language: row.language,
    url: `${baseUrl}/v1/legal/documents/${row.slug}`,
  };
}

function presentDocument(baseUrl: string, row: LegalDocumentRow): LegalDocument {
  return { ...presentSummary(baseUrl, row), body: row.body, published_at: row.published_at.toISOString() };
}

export async function listLegalDocuments(services: Services): Promise<ListEnvelope<LegalDocumentSummary>> {
  const rows = await createLegalQueries(services.db).current(LEGAL_LANGUAGE);
  const data = rows.map((row) => presentSummary(services.config.api.publicBaseUrl, row));
  return { object: 'list', data, has_more: false, next_cursor: null, limit: data.length, offset: null };
}

export async function getLegalDocument(services: Services, slug: string): Promise<LegalDocument> {
  const row = await createLegalQueries(services.db).currentOne(slug, LEGAL_LANGUAGE);
  if (!row) throw notFound('legal document');
  return presentDocument(services.config.api.publicBaseUrl, row);
}

/**
 * The caller's user accepts a document's current version. Any other version is refused with 409
 * (it exists or not: only the current one can be accepted), naming the current one.
 */
export async function acceptLegalDocument(
  services: Services,
  caller: Caller,
  input: AcceptLegalInput,
): Promise<LegalAcceptance> {
  const current = await createLegalQueries(services.db).currentOne(input.slug, LEGAL_LANGUAGE);
  if (!current) throw new DomainError('not_found', 'No such legal document.', { param: 'slug' });
  if (current.version !== input.version) {
    throw new DomainError(
      'validation_error',
      `Version ${input.version} of ${input.slug} is not its current version (${current.version}): accept that one.`,
      { param: 'version', kind: 'conflict', details: { current_version: current.version } },
    );
  }
  const acceptedAt = new Date();
  await createEventQueries(services.db).record(tenantOf(caller), 'workspace.legal_accepted', {
    user_id: caller.userId,
    slug: current.slug,
    version: current.version,
  });
  return {
    object: 'legal_acceptance',
    slug: current.slug,
    version: current.version,
    user_id: caller.userId,
    accepted_at: acceptedAt.toISOString(),
  };
}

/**
 * The caller's user's acceptance of each current document, from the tenant's newest 500 `legal.*`
 * audit entries (the caller's environment: the audit log is per environment).
 */
export async function listLegalAcceptances(services: Services, caller: Caller): Promise<LegalAcceptanceList> {
  const queries = createLegalQueries(services.db);
  const [documents, acceptances] = await Promise.all([
    queries.current(LEGAL_LANGUAGE),
    queries.acceptances(tenantOf(caller), caller.userId, ACCEPTANCE_SCAN_WINDOW),
  ]);
  const data = documents.map((document): LegalAcceptanceEntry => {
    // Newest first: the latest acceptance of this document, whichever version it was.
    const latest = acceptances.find((acceptance) => acceptance.slug === document.slug) ?? null;
    return {
      slug: document.slug,
      title: document.title,
      current_version: document.version,
      effective_date: document.effective_date,
      accepted_version: latest?.version ?? null,
      accepted_at: latest?.accepted_at.toISOString() ?? null,
      up_to_date: latest?.version === document.version,
    };
  });
  const upToDate = data.filter((entry) => entry.up_to_date).length;
  const never = data.filter((entry) => entry.accepted_version === null).length;
  return {
    object: 'list',
    data,
    has_more: false,
    next_cursor: null,
    limit: ACCEPTANCE_SCAN_WINDOW,
    offset: null,
    summary: {
      total_documents: data.length,
      accepted_up_to_date: upToDate,
      acceptance_outdated: data.length - upToDate - never,
      never_accepted: never,
    },
  };
}

/** The operator publishes a version (scripts/admin.ts `legal-publish`); refused when it exists. */
export async function publishLegalVersion(db: DatabasePool, version: NewLegalVersion): Promise<LegalDocument> {
  const row = await createLegalQueries(db).publish(version);
  if (!row) {
    throw new DomainError('validation_error', `Version ${version.version} of ${version.slug} exists already.`, {
      param: 'version',
      kind: 'conflict',
    });
  }
  return presentDocument('', row);
}
