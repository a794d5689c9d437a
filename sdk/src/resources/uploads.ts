import { expectFunction, expectHttpUrl, expectInteger, expectObject, expectSignal } from '../arguments.ts';
import { type RequestOptions, UPLOAD_PART_BYTES } from '../client.ts';
import { type SendFileInput, toFileSource } from '../sources.ts';
import type { UploadStatus } from '../types.ts';
import { storedOffset, uploadFile } from '../upload.ts';
import { Resource } from './resource.ts';

/**
 * Upload URLs (from `transfers.create`) one at a time, for callers that manage their own transfers.
 * They carry their own token: no API key is sent. `transfers.send` does all of this for you.
 */
export class Uploads extends Resource {
  status(uploadUrl: string, options?: RequestOptions): Promise<UploadStatus> {
    return this.http.json({ ...options, method: 'GET', path: uploadUrl, authenticate: false });
  }

  /** How many bytes are stored (`HEAD`, `Upload-Offset`). */
  offset(uploadUrl: string, options?: RequestOptions): Promise<number> {
    return storedOffset(this.http, uploadUrl, options?.signal);
  }

  /**
   * Streams a server-mode file to its upload URL, resuming from what is stored when `resume` is set
   * (and after network failures either way). For e2e files use `transfers.send`, which encrypts.
   */
  async put(
    uploadUrl: string,
    file: SendFileInput,
    options: {
      resume?: boolean;
      signal?: AbortSignal;
      onProgress?: (uploaded: number) => void;
      /** The upload URL entry's `part_size`, when sending in chunks (`uploadChunkBytes`); asked for otherwise. */
      partSize?: number;
    } = {},
  ): Promise<void> {
    expectHttpUrl(uploadUrl, 'uploadUrl', 'an upload URL from transfers.create');
    const source = await toFileSource(file, 'file');
    expectObject(options, 'options');
    expectFunction(options.onProgress, 'options.onProgress', 'a function', true);
    expectSignal(options.signal, 'options.signal');
    let sentThisRequest = 0;
    let currentRequest = -1;
    expectInteger(options.partSize, 'options.partSize', 1);
    // Only chunks need it: a streamed PUT is cut into parts by the server.
    const partSize =
      options.partSize ??
      (this.http.uploadChunkBytes === null ? UPLOAD_PART_BYTES : (await this.status(uploadUrl)).part_size);
    return uploadFile(this.http, { url: uploadUrl, size: source.size, partSize, e2e: null }, source, {
      resume: options.resume ?? false,
      signal: options.signal,
      onBytes: (sent, stored, request) => {
        if (request !== currentRequest) [currentRequest, sentThisRequest] = [request, 0];
        sentThisRequest += sent;
        options.onProgress?.(stored + sentThisRequest);
      },
    });
  }
}
