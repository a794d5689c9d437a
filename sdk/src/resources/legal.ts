import type { RequestOptions } from '../client.ts';
import type { PageRequest } from '../pagination.ts';
import type { LegalAcceptance, LegalDocument, LegalDocumentSummary } from '../types.ts';
import { Resource } from './resource.ts';

/** Valise's published legal documents (in French), and accepting their current version. */
export class Legal extends Resource {
  /** The current version of each document, without its body. */
  documents(options?: RequestOptions): PageRequest<LegalDocumentSummary> {
    return this.paged('legal.documents', { options });
  }

  /** A document's current version, with its body. */
  document(slug: string, options?: RequestOptions): Promise<LegalDocument> {
    return this.call('legal.document', { params: { slug }, options });
  }

  /**
   * The key's user accepts `version` of `slug`, which must be the current one (409 otherwise):
   * without `version`, the current version is read first and accepted.
   */
  async accept(slug: string, version?: string, options?: RequestOptions): Promise<LegalAcceptance> {
    const accepted = version ?? (await this.document(slug, options)).version;
    return this.call('legal.accept', { body: { slug, version: accepted }, options });
  }
}
