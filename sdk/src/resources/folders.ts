import type { RequestOptions } from '../client.ts';
import type { PageRequest } from '../pagination.ts';
import type { CreateFolderParams, Folder } from '../types.ts';
import { Resource } from './resource.ts';

/** Folders for transfers. File a transfer with `transfers.setFolder`. */
export class Folders extends Resource {
  list(params: { limit?: number } = {}, options?: RequestOptions): PageRequest<Folder> {
    return this.paged('folders.list', { query: params, options });
  }

  create(params: CreateFolderParams, options?: RequestOptions): Promise<Folder> {
    return this.call('folders.create', { body: params, options });
  }
}
