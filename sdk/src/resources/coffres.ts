import { newIdempotencyKey, type RequestOptions } from '../client.ts';
import type { PageRequest } from '../pagination.ts';
import { resolveRoute } from '../routes.ts';
import { type FileSource, type SendFileInput, toFileSource } from '../sources.ts';
import type {
  ArchiveLink,
  Coffre,
  CoffreAccessEntry,
  CoffreDownloadLink,
  CoffreItem,
  CoffreMember,
  CoffreMemberView,
  CoffreVisibleItems,
  CreateCoffreItemParams,
  CreateCoffreParams,
  CreatedCoffreItem,
  DeletedCoffre,
  DeletedCoffreItem,
  InviteCoffreMemberParams,
  InvitedCoffreMember,
  ResendCoffreInvitationParams,
  UpdateCoffreMemberParams,
  UpdateCoffreParams,
} from '../types.ts';
import { uploadFile } from '../upload.ts';
import { Resource } from './resource.ts';

export type PutCoffreItemParams = {
  file: SendFileInput;
  /** Called as the bytes leave. */
  onProgress?: ((progress: { bytesSent: number; bytesTotal: number }) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** Automatic resumes after a network failure or a 5xx; default 3. */
  maxResumes?: number | undefined;
};

/** The token of an invitation link (`…/v/{token}`), or the token itself. */
export function invitationToken(linkOrToken: string): string {
  const match = /\/v\/([\w-]+\.[\w-]+)\/?$/.exec(linkOrToken);
  return match?.[1] ?? linkOrToken;
}

/**
 * Vaults (docs/coffres.md): data rooms whose members, invited by e-mail, reach them through a
 * signed link. The owner's methods take an API key; `open`, `listVisibleItems`,
 * `memberDownloadLink`, `memberUpload` and `memberPut` take the member's invitation link (or its
 * token) instead, and no key.
 */
export class Coffres extends Resource {
  list(params: { limit?: number } = {}, options?: RequestOptions): PageRequest<Coffre> {
    return this.paged('coffres.list', { query: params, options });
  }

  create(params: CreateCoffreParams, options?: RequestOptions): Promise<Coffre> {
    return this.call('coffres.create', { body: params, options });
  }

  get(id: string, options?: RequestOptions): Promise<Coffre> {
    return this.call('coffres.get', { params: { id }, options });
  }

  /** `expires_at: null` removes the expiry. */
  update(id: string, params: UpdateCoffreParams, options?: RequestOptions): Promise<Coffre> {
    return this.call('coffres.update', { params: { id }, body: params, options });
  }

  /** Deletes the vault: every item is crypto-shredded, every invitation link stops working. */
  delete(id: string, options?: RequestOptions): Promise<DeletedCoffre> {
    return this.call('coffres.delete', { params: { id }, options });
  }

  // Members

  /** Mails the member their link; `invitation_url` carries it in this answer only. */
  inviteMember(id: string, params: InviteCoffreMemberParams, options?: RequestOptions): Promise<InvitedCoffreMember> {
    return this.call('coffres.inviteMember', { params: { id }, body: params, options });
  }

  listMembers(id: string, params: { limit?: number } = {}, options?: RequestOptions): PageRequest<CoffreMember> {
    return this.paged('coffres.listMembers', { params: { id }, query: params, options });
  }

  updateMember(
    id: string,
    memberId: string,
    params: UpdateCoffreMemberParams,
    options?: RequestOptions,
  ): Promise<CoffreMember> {
    return this.call('coffres.updateMember', { params: { id, memberId }, body: params, options });
  }

  /** The member's link is refused from now on. */
  revokeMember(id: string, memberId: string, options?: RequestOptions): Promise<CoffreMember> {
    return this.call('coffres.revokeMember', { params: { id, memberId }, options });
  }

  /** A new link, mailed again; the member's earlier links stop working. */
  resendInvitation(
    id: string,
    memberId: string,
    params: ResendCoffreInvitationParams = {},
    options?: RequestOptions,
  ): Promise<InvitedCoffreMember> {
    return this.call('coffres.resendInvitation', { params: { id, memberId }, body: params, options });
  }

  // Items

  /** Declares an item; upload its bytes to `upload_url`, or use `put`. */
  createItem(id: string, params: CreateCoffreItemParams, options?: RequestOptions): Promise<CreatedCoffreItem> {
    return this.call('coffres.createItem', { params: { id }, body: params, options });
  }

  listItems(id: string, params: { limit?: number } = {}, options?: RequestOptions): PageRequest<CoffreItem> {
    return this.paged('coffres.listItems', { params: { id }, query: params, options });
  }

  /** With a fresh `download_url` once the item is `available`. */
  getItem(id: string, itemId: string, options?: RequestOptions): Promise<CoffreItem> {
    return this.call('coffres.getItem', { params: { id, itemId }, options });
  }

  deleteItem(id: string, itemId: string, options?: RequestOptions): Promise<DeletedCoffreItem> {
    return this.call('coffres.deleteItem', { params: { id, itemId }, options });
  }

  /** Adds a file to the vault: declared, then streamed (resumed after an interruption). Answers the item. */
  async put(id: string, params: PutCoffreItemParams, options?: RequestOptions): Promise<CreatedCoffreItem> {
    const source = await toFileSource(params.file, 'file');
    const created = await this.createItem(
      id,
      { name: source.name, size: source.size, ...(source.type ? { mime_type: source.type } : {}) },
      options,
    );
    await this.upload(created, params, source);
    return created;
  }

  /**
   * The vault's items as one ZIP, streamed (body unread; its length in `content-length`): those
   * `itemIds` names (at most 100), or every available one. Each is logged as downloaded by this key.
   */
  archive(id: string, params: { itemIds?: readonly string[] } = {}, options: RequestOptions = {}): Promise<Response> {
    const { method, path } = resolveRoute('coffres.archive', { id });
    const query = params.itemIds ? `?item_ids=${params.itemIds.map(encodeURIComponent).join(',')}` : '';
    return this.http.send({
      ...options,
      method,
      path: `${path}${query}`,
      headers: { accept: 'application/zip, application/json' },
      timeoutMs: options.timeoutMs ?? this.http.transferTimeoutMs,
    });
  }

  accessLog(id: string, params: { limit?: number } = {}, options?: RequestOptions): PageRequest<CoffreAccessEntry> {
    return this.paged('coffres.accessLog', { params: { id }, query: params, options });
  }

  // The member side: the invitation link is the credential.

  open(invitation: string, options?: RequestOptions): Promise<CoffreMemberView> {
    return this.call('coffres.open', { params: { token: invitationToken(invitation) }, options, authenticate: false });
  }

  listVisibleItems(invitation: string, options?: RequestOptions): Promise<CoffreVisibleItems> {
    return this.call('coffres.listVisibleItems', {
      params: { token: invitationToken(invitation) },
      options,
      authenticate: false,
    });
  }

  /** With `download` or `upload` access: a link valid 300 s; open it with `openDownload`. */
  memberDownloadLink(invitation: string, itemId: string, options?: RequestOptions): Promise<CoffreDownloadLink> {
    return this.call('coffres.memberDownloadLink', {
      params: { token: invitationToken(invitation), itemId },
      options,
      authenticate: false,
    });
  }

  /**
   * With `download` or `upload` access: a link valid 300 s that streams the chosen items (at most
   * 100; all the member may download without `itemIds`) as one ZIP; open it with `openArchive`.
   */
  memberArchiveLink(
    invitation: string,
    params: { itemIds?: readonly string[] } = {},
    options?: RequestOptions,
  ): Promise<ArchiveLink> {
    return this.call('coffres.memberArchiveLink', {
      params: { token: invitationToken(invitation) },
      body: params.itemIds ? { item_ids: [...params.itemIds] } : {},
      options,
      authenticate: false,
    });
  }

  /** The response of a member's `archive_url`: the ZIP, body unread (a stream). */
  openArchive(archiveUrl: string, options: RequestOptions = {}): Promise<Response> {
    return this.fetchLink(archiveUrl, options);
  }

  /** With `upload` access: declares an item; upload to `upload_url`, or use `memberPut`. */
  memberUpload(
    invitation: string,
    params: CreateCoffreItemParams,
    options?: RequestOptions,
  ): Promise<CreatedCoffreItem> {
    return this.call('coffres.memberUpload', {
      params: { token: invitationToken(invitation) },
      body: params,
      // The API key's writes get one by default; a member's write, keyed by the link, too.
      options: { ...options, idempotencyKey: options?.idempotencyKey ?? newIdempotencyKey() },
      authenticate: false,
    });
  }

  /** With `upload` access: adds a file to the vault, streamed. */
  async memberPut(
    invitation: string,
    params: PutCoffreItemParams,
    options?: RequestOptions,
  ): Promise<CreatedCoffreItem> {
    const source = await toFileSource(params.file, 'file');
    const created = await this.memberUpload(
      invitation,
      { name: source.name, size: source.size, ...(source.type ? { mime_type: source.type } : {}) },
      options,
    );
    await this.upload(created, params, source);
    return created;
  }

  /** The response of an item's `download_url` (owner's or member's), body unread (a stream). */
  openDownload(downloadUrl: string, options: RequestOptions & { range?: string } = {}): Promise<Response> {
    return this.fetchLink(downloadUrl, options);
  }

  private async upload(created: CreatedCoffreItem, params: PutCoffreItemParams, source: FileSource) {
    let bytesSent = 0;
    const { url, size, part_size: partSize } = created.upload_url;
    await uploadFile(this.http, { url, size, partSize, e2e: null }, source, {
      resume: false,
      signal: params.signal,
      maxResumes: params.maxResumes,
      onBytes: (sent) => {
        bytesSent += sent;
        params.onProgress?.({ bytesSent, bytesTotal: created.upload_url.size });
      },
    });
  }
}
