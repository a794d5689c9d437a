import type { RequestOptions } from '../client.ts';
import { type DownloadParams, downloadShare } from '../download.ts';
import { downloadShareZip, type ZipDownloadParams } from '../download-zip.ts';
import type { PageRequest } from '../pagination.ts';
import { resolveRoute } from '../routes.ts';
import {
  checkProgressParams,
  type PrepareParams,
  prepareSend,
  type ResumeParams,
  type SendParams,
  type SendResult,
  type SendSession,
  uploadAll,
} from '../send.ts';
import type {
  ApproveTransferParams,
  CreatedTransfer,
  CreateTransferParams,
  ListTransfersParams,
  Transfer,
  TransferFolder,
  TransferListItem,
  TransferRecipient,
  UpdateTransferParams,
} from '../types.ts';
import { Resource } from './resource.ts';
import { Shares } from './shares.ts';

export class Transfers extends Resource {
  /** `for await (const t of valise.transfers.list({ status: 'active' }))` walks every page. */
  list(params: ListTransfersParams = {}, options?: RequestOptions): PageRequest<TransferListItem> {
    return this.paged('transfers.list', { query: params, options });
  }

  /** Creates the transfer only; upload each file to its `upload_urls` entry, or use `send`. */
  create(params: CreateTransferParams, options?: RequestOptions): Promise<CreatedTransfer> {
    return this.call('transfers.create', { body: params, options });
  }

  get(id: string, options?: RequestOptions): Promise<Transfer> {
    return this.call('transfers.get', { params: { id }, options });
  }

  /** Changes the transfer's `allowed_countries` (null lifts the restriction). */
  update(id: string, params: UpdateTransferParams, options?: RequestOptions): Promise<Transfer> {
    return this.call('transfers.update', { params: { id }, body: params, options });
  }

  /** Revokes the transfer: its keys are destroyed at once. Repeating it is harmless. */
  revoke(id: string, options?: RequestOptions): Promise<Transfer> {
    return this.call('transfers.revoke', { params: { id }, options });
  }

  approve(id: string, params: ApproveTransferParams, options?: RequestOptions): Promise<Transfer> {
    return this.call('transfers.approve', { params: { id }, body: params, options });
  }

  setFolder(id: string, folderId: string, options?: RequestOptions): Promise<TransferFolder> {
    return this.call('transfers.setFolder', { params: { id }, body: { folder_id: folderId }, options });
  }

  removeFolder(id: string, options?: RequestOptions): Promise<TransferFolder> {
    return this.call('transfers.removeFolder', { params: { id }, options });
  }

  /**
   * The transfer's files as one ZIP, streamed (body unread; its length in `content-length`).
   * Server-mode transfers: an end-to-end one is refused with `end_to_end` (build its archive from
   * the decrypted files, e.g. with `zipChunks`). Counts no download; recorded in the audit log.
   */
  archive(id: string, options: RequestOptions = {}): Promise<Response> {
    const { method, path } = resolveRoute('transfers.archive', { id });
    return this.http.send({
      ...options,
      method,
      path,
      headers: { accept: 'application/zip, application/json' },
      timeoutMs: options.timeoutMs ?? this.http.transferTimeoutMs,
    });
  }

  /** Who the transfer was sent to: each address with its personal link and the downloads completed through it. */
  recipients(id: string, options?: RequestOptions): PageRequest<TransferRecipient> {
    return this.paged('transfers.recipients', { params: { id }, options });
  }

  /**
   * Creates a transfer and uploads its files, streamed, with progress. `mode: 'e2e'` encrypts here and
   * returns a share link with the key in its fragment. A failure after the transfer exists throws
   * SendInterruptedError, whose `session` `resume` takes to upload only what is missing.
   */
  async send(params: SendParams): Promise<SendResult> {
    checkProgressParams(params);
    const { onProgress, maxResumes, ...fields } = params;
    const session = await this.prepare(fields);
    return uploadAll(this.http, session, { files: params.files, onProgress, signal: params.signal, maxResumes }, false);
  }

  /**
   * The first half of `send`: creates the transfer (and the e2e link key) and returns the session,
   * JSON you can store before uploading with `resume(session, { files })`. For senders that must
   * survive their own process being killed mid-upload, as the CLI does.
   */
  prepare(params: PrepareParams, options?: RequestOptions): Promise<SendSession> {
    return prepareSend((body) => this.create(body, { signal: params.signal, ...options }), params);
  }

  /** Finishes an interrupted `send`: asks each upload URL what it stored and sends the rest. */
  resume(session: SendSession, params: ResumeParams): Promise<SendResult> {
    return uploadAll(this.http, session, params, true);
  }

  /**
   * Every file of a share link as one ZIP into `to`: the API's archive for a server-mode share, one
   * built here from the decrypted files for an end-to-end one. One download counted either way.
   */
  downloadZip(shareUrl: string, params: ZipDownloadParams) {
    return downloadShareZip(new Shares(this.http), shareUrl, params);
  }

  /** Downloads every file of a share link into `to`, decrypting e2e content with the link's `#k=` key. */
  download(shareUrl: string, params: DownloadParams) {
    return downloadShare(new Shares(this.http), shareUrl, params);
  }
}
