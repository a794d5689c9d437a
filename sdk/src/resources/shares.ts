import type { RequestOptions } from '../client.ts';
import type { ArchiveLink, DownloadLinks, DownloadLinksParams, SharedTransfer, UnlockShareParams } from '../types.ts';
import { Resource } from './resource.ts';

/** Public share routes: no API key needed, the short code is the capability. */
export class Shares extends Resource {
  get(shortCode: string, options?: RequestOptions): Promise<SharedTransfer> {
    return this.call('shares.get', { params: { code: shortCode }, options, authenticate: false });
  }

  /**
   * The whole view of a password-protected share (title and files, which `get` leaves null until
   * then). Counts no download; wrong passwords are limited per link and client address.
   */
  unlock(shortCode: string, params: UnlockShareParams = {}, options?: RequestOptions): Promise<SharedTransfer> {
    return this.call('shares.unlock', { params: { code: shortCode }, body: params, options, authenticate: false });
  }

  /** Counts one download of the transfer and returns a link per file, valid 300 seconds. */
  downloadLinks(shortCode: string, params: DownloadLinksParams = {}, options?: RequestOptions): Promise<DownloadLinks> {
    return this.call('shares.downloadLinks', {
      params: { code: shortCode },
      body: params,
      options,
      authenticate: false,
    });
  }

  /** The response of a download link, body unread (a stream). `range` is a `Range` header value. */
  openDownload(downloadUrl: string, options: RequestOptions & { range?: string } = {}): Promise<Response> {
    return this.fetchLink(downloadUrl, options);
  }

  /**
   * Counts one download, as `downloadLinks` does, and returns one link that streams every file as
   * a ZIP (server-mode transfers; an end-to-end one is refused with `end_to_end`).
   */
  archiveLink(shortCode: string, params: UnlockShareParams = {}, options?: RequestOptions): Promise<ArchiveLink> {
    return this.call('shares.archiveLink', { params: { code: shortCode }, body: params, options, authenticate: false });
  }

  /** The response of an archive link, body unread: the ZIP as a stream, its length in `content-length`. */
  openArchive(archiveUrl: string, options: RequestOptions = {}): Promise<Response> {
    return this.fetchLink(archiveUrl, options);
  }
}
