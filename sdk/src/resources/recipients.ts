import type { RequestOptions } from '../client.ts';
import type { PageRequest } from '../pagination.ts';
import type {
  CreateRecipientParams,
  DeletedRecipient,
  ListRecipientsParams,
  Recipient,
  UpdateRecipientParams,
} from '../types.ts';
import { Resource } from './resource.ts';

/**
 * The workspace's address book: entries made here or from the addresses transfers are sent to,
 * each with what was sent to it and downloaded through its personal links (docs/recipients.md).
 */
export class Recipients extends Resource {
  /** Newest first; `search` matches address, name or organisation, `tag` one tag. */
  list(params: ListRecipientsParams = {}, options?: RequestOptions): PageRequest<Recipient> {
    return this.paged('recipients.list', { query: params, options });
  }

  /** An address already in the address book (whatever its case) is refused with a ConflictError. */
  create(params: CreateRecipientParams, options?: RequestOptions): Promise<Recipient> {
    return this.call('recipients.create', { body: params, options });
  }

  get(id: string, options?: RequestOptions): Promise<Recipient> {
    return this.call('recipients.get', { params: { id }, options });
  }

  update(id: string, params: UpdateRecipientParams, options?: RequestOptions): Promise<Recipient> {
    return this.call('recipients.update', { params: { id }, body: params, options });
  }

  /** Personal links already sent keep working. */
  delete(id: string, options?: RequestOptions): Promise<DeletedRecipient> {
    return this.call('recipients.delete', { params: { id }, options });
  }
}
