import type { RequestOptions } from '../client.ts';
import type { PageRequest } from '../pagination.ts';
import type {
  CreatedIntake,
  CreateIntakeParams,
  CreatePublishableKeyParams,
  DeletedIntake,
  DeletedIntakeDocument,
  Intake,
  IntakeDocument,
  IntakeForm,
  IntakeSubmission,
  ListIntakeDocumentsParams,
  ListIntakesParams,
  PublishableKey,
  StartSubmissionParams,
  UpdateIntakeParams,
} from '../types.ts';
import { Resource } from './resource.ts';

/**
 * Secure intakes (docs/intakes.md): receive files from people without an account. The owner's
 * methods take an API key; `getForm` and `submit` take the intake's publishable key (`cip_…`) as the
 * client's key. End-to-end documents are sealed and opened with sdk/src/crypto/intake-envelope.ts.
 */
export class Intakes extends Resource {
  list(params: ListIntakesParams = {}, options?: RequestOptions): PageRequest<Intake> {
    return this.paged('intakes.list', { query: params, options });
  }

  /** The answer carries a first publishable key (`publishable_key.key`) to embed in a page. */
  create(params: CreateIntakeParams, options?: RequestOptions): Promise<CreatedIntake> {
    return this.call('intakes.create', { body: params, options });
  }

  get(id: string, options?: RequestOptions): Promise<Intake> {
    return this.call('intakes.get', { params: { id }, options });
  }

  update(id: string, params: UpdateIntakeParams, options?: RequestOptions): Promise<Intake> {
    return this.call('intakes.update', { params: { id }, body: params, options });
  }

  close(id: string, options?: RequestOptions): Promise<Intake> {
    return this.call('intakes.close', { params: { id }, options });
  }

  delete(id: string, options?: RequestOptions): Promise<DeletedIntake> {
    return this.call('intakes.delete', { params: { id }, options });
  }

  listDocuments(
    id: string,
    params: ListIntakeDocumentsParams = {},
    options?: RequestOptions,
  ): PageRequest<IntakeDocument> {
    return this.paged('intakes.listDocuments', { params: { id }, query: params, options });
  }

  /** With fresh download URLs, valid 300 seconds. */
  getDocument(id: string, docId: string, options?: RequestOptions): Promise<IntakeDocument> {
    return this.call('intakes.getDocument', { params: { id, docId }, options });
  }

  deleteDocument(id: string, docId: string, options?: RequestOptions): Promise<DeletedIntakeDocument> {
    return this.call('intakes.deleteDocument', { params: { id, docId }, options });
  }

  createPublishableKey(
    id: string,
    params: CreatePublishableKeyParams = {},
    options?: RequestOptions,
  ): Promise<PublishableKey> {
    return this.call('intakes.createPublishableKey', { params: { id }, body: params, options });
  }

  listPublishableKeys(id: string, options?: RequestOptions): PageRequest<PublishableKey> {
    return this.paged('intakes.listPublishableKeys', { params: { id }, options });
  }

  revokePublishableKey(id: string, keyId: string, options?: RequestOptions): Promise<PublishableKey> {
    return this.call('intakes.revokePublishableKey', { params: { id, keyId }, options });
  }

  /** With a publishable key: what a submitter needs, the owner's public key included. */
  getForm(id: string, options?: RequestOptions): Promise<IntakeForm> {
    return this.call('intakes.getForm', { params: { id }, options });
  }

  /** With a publishable key: starts a submission; upload each file to its `upload_urls` entry. */
  submit(id: string, params: StartSubmissionParams, options?: RequestOptions): Promise<IntakeSubmission> {
    return this.call('intakes.submit', { params: { id }, body: params, options });
  }

  /** The response of a document file's `download_url`, body unread (a stream). */
  openDownload(downloadUrl: string, options: RequestOptions & { range?: string } = {}): Promise<Response> {
    return this.fetchLink(downloadUrl, options);
  }
}
