import type { RequestOptions } from '../client.ts';
import { createDecryptStream } from '../crypto/val1.ts';
import { InvalidArgumentError, ValiseError } from '../errors.ts';
import { openDocumentKeys, sealSubmission } from '../intake-files.ts';
import type { PageRequest } from '../pagination.ts';
import { type SendFileInput, toFileSources } from '../sources.ts';
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
import { uploadFile } from '../upload.ts';
import { Resource } from './resource.ts';

export type SendToIntakeParams = Omit<StartSubmissionParams, 'files' | 'envelope'> & {
  files: SendFileInput[];
  /** Called as each file's bytes leave: the file's index, and its bytes sent so far. */
  onProgress?: ((progress: { fileIndex: number; bytesSent: number; bytesTotal: number }) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** Automatic resumes per file after a network failure or a 5xx; default 3. */
  maxResumes?: number | undefined;
};

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

  /**
   * With a publishable key: sends files to an intake, as its page does. For an end-to-end intake
   * each file is encrypted here to the owner's public key (docs/intake-encryption.md), so only
   * ciphertext leaves; for a server-mode one the server encrypts. Answers the submission.
   */
  async send(intakeId: string, params: SendToIntakeParams, options?: RequestOptions): Promise<IntakeSubmission> {
    const { files, onProgress, signal, maxResumes, ...fields } = params;
    const sources = await toFileSources(files);
    const form = await this.getForm(intakeId, options);
    const sealed = await sealSubmission(form, sources);
    const submission = await this.submit(
      intakeId,
      { ...fields, files: sealed.files, ...(sealed.envelope ? { envelope: sealed.envelope } : {}) },
      options,
    );
    for (const [index, entry] of submission.upload_urls.entries()) {
      const source = sources[index];
      if (!source) break;
      const e2e = sealed.seal ? await sealed.seal(entry.file_id, index) : null;
      let bytesSent = 0;
      await uploadFile(this.http, { url: entry.url, size: entry.size, partSize: entry.part_size, e2e }, source, {
        resume: false,
        signal,
        maxResumes,
        onBytes: (sent) => {
          bytesSent += sent;
          onProgress?.({ fileIndex: index, bytesSent, bytesTotal: entry.size });
        },
      });
    }
    return submission;
  }

  /**
   * One file of a document, as a stream of its plaintext. An end-to-end document's file is
   * decrypted here with the intake's private key, which never leaves this machine; each segment is
   * authenticated before its bytes are passed on.
   */
  async openFile(
    document: IntakeDocument,
    fileId: string,
    options: RequestOptions & { privateKey?: Uint8Array | undefined } = {},
  ): Promise<ReadableStream<Uint8Array>> {
    const { privateKey, ...request } = options;
    const file = document.files.find((candidate) => candidate.id === fileId);
    if (!file?.download_url) {
      throw new InvalidArgumentError('fileId', `no file ${fileId} of document ${document.id} can be downloaded now`);
    }
    const endToEnd = document.encryption.mode === 'e2e_asym';
    if (endToEnd && !privateKey) {
      throw new InvalidArgumentError(
        'privateKey',
        'an end-to-end document opens only with the intake\u2019s private key',
      );
    }
    const keyOf = endToEnd && privateKey ? await openDocumentKeys(document, privateKey) : null;
    const response = await this.fetchLink(file.download_url, request);
    if (!response.body) throw new ValiseError({ code: 'unexpected_response', message: 'The download had no body.' });
    if (!keyOf) return response.body;
    const key = await keyOf(file.id);
    return response.body.pipeThrough(createDecryptStream({ key, blobSize: file.encrypted_size_bytes ?? 0 }));
  }

  /** The response of a document file's `download_url`, body unread (a stream). */
  openDownload(downloadUrl: string, options: RequestOptions & { range?: string } = {}): Promise<Response> {
    return this.fetchLink(downloadUrl, options);
  }
}
