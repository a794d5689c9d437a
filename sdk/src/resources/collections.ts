import type { RequestOptions } from '../client.ts';
import type { PageRequest } from '../pagination.ts';
import type {
  AddCollectionTransfersParams,
  ArchiveLink,
  Collection,
  CollectionArchiveLinkParams,
  CollectionDownloadLinksParams,
  CollectionSummary,
  CreateCollectionParams,
  DeletedCollection,
  DownloadLinks,
  SharedCollection,
  UpdateCollectionParams,
} from '../types.ts';
import { Resource } from './resource.ts';

/** Collections: transfers grouped under a title, shared through one link (docs/collections.md). */
export class Collections extends Resource {
  list(params: { limit?: number } = {}, options?: RequestOptions): PageRequest<CollectionSummary> {
    return this.paged('collections.list', { query: params, options });
  }

  /** `transfer_ids` (optional) join in that order; the answer carries the `share_url`. */
  create(params: CreateCollectionParams, options?: RequestOptions): Promise<Collection> {
    return this.call('collections.create', { body: params, options });
  }

  /** The collection with its transfers, in order. */
  get(id: string, options?: RequestOptions): Promise<Collection> {
    return this.call('collections.get', { params: { id }, options });
  }

  update(id: string, params: UpdateCollectionParams, options?: RequestOptions): Promise<Collection> {
    return this.call('collections.update', { params: { id }, body: params, options });
  }

  /** Deletes the collection and its link; the transfers stay. */
  delete(id: string, options?: RequestOptions): Promise<DeletedCollection> {
    return this.call('collections.delete', { params: { id }, options });
  }

  /** At the end, or at `position` (transfers already in the collection move there). */
  addTransfers(id: string, params: AddCollectionTransfersParams, options?: RequestOptions): Promise<Collection> {
    return this.call('collections.addTransfers', { params: { id }, body: params, options });
  }

  removeTransfer(id: string, transferId: string, options?: RequestOptions): Promise<Collection> {
    return this.call('collections.removeTransfer', { params: { id, transferId }, options });
  }

  /** A new `share_url`; the old link stops working at once. Turns a disabled link back on. */
  rotateShareLink(id: string, options?: RequestOptions): Promise<Collection> {
    return this.call('collections.rotateShareLink', { params: { id }, options });
  }

  /** `share_url` becomes null and the link stops working. */
  disableShareLink(id: string, options?: RequestOptions): Promise<Collection> {
    return this.call('collections.disableShareLink', { params: { id }, options });
  }

  /** Public: what a visitor of the link (`…/c/{code}`) sees. No API key needed. */
  getShared(code: string, options?: RequestOptions): Promise<SharedCollection> {
    return this.call('collections.getShared', { params: { code }, options, authenticate: false });
  }

  /**
   * Public: download links for one transfer of a shared collection, through the transfer's own
   * machinery (its password, one download counted). Open them with `shares.openDownload`.
   */
  sharedDownloadLinks(
    code: string,
    params: CollectionDownloadLinksParams,
    options?: RequestOptions,
  ): Promise<DownloadLinks> {
    return this.call('collections.sharedDownloadLinks', {
      params: { code },
      body: params,
      options,
      authenticate: false,
    });
  }

  /**
   * Public: one link that streams the collection as a ZIP, a folder per transfer: the open ones and
   * those whose password is in `passwords` (by transfer id), each counted as one download. Open it
   * with `shares.openArchive`.
   */
  sharedArchiveLink(
    code: string,
    params: CollectionArchiveLinkParams = {},
    options?: RequestOptions,
  ): Promise<ArchiveLink> {
    return this.call('collections.sharedArchiveLink', { params: { code }, body: params, options, authenticate: false });
  }
}
