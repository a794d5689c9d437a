import type { RequestOptions } from '../client.ts';
import { Resource } from './resource.ts';

// The recipient's side of a share link. These routes declare no response
// schema in the OpenAPI document yet, so their shapes are written here from
// lib/transfers/share.ts (see docs/sdk.md, "Known gaps").

export type SharedFile = { id: string; name: string; size: number; mime_type: string; sha256: string | null };

export type SharedTransfer = {
  object: 'shared_transfer';
  short_code: string;
  transfer_title: string | null;
  status: string;
  available: boolean;
  blocked_reason: string | null;
  message: string | null;
  encryption_mode: 'server' | 'e2e';
  password_required: boolean;
  expires_at: string;
  downloads_remaining: number | null;
  files: SharedFile[];
};

export type DownloadLinks = {
  object: 'download_links';
  total_downloads: number;
  files: Array<{ file_id: string; name: string; size: number; download_url: string; download_expires_in: number }>;
};

/** Public share routes: no API key needed, the short code is the capability. */
export class Shares extends Resource {
  get(shortCode: string, options?: RequestOptions): Promise<SharedTransfer> {
    return this.call('shares.get', { params: { code: shortCode }, options, authenticate: false });
  }

  /** Counts one download of the transfer and returns a link per file, valid 300 seconds. */
  downloadLinks(
    shortCode: string,
    params: { password?: string; file_id?: string } = {},
    options?: RequestOptions,
  ): Promise<DownloadLinks> {
    return this.call('shares.downloadLinks', {
      params: { code: shortCode },
      body: params,
      options,
      authenticate: false,
    });
  }

  /** The response of a download link, body unread (a stream). `range` is a `Range` header value. */
  openDownload(downloadUrl: string, options: RequestOptions & { range?: string } = {}): Promise<Response> {
    return this.http.send({
      ...options,
      method: 'GET',
      path: downloadUrl,
      authenticate: false,
      headers: { accept: '*/*', ...(options.range ? { range: options.range } : {}) },
      timeoutMs: options.timeoutMs ?? this.http.transferTimeoutMs,
    });
  }
}
