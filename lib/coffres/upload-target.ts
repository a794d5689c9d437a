import { createCoffreQueries } from '../db/queries/coffres.ts';
import { DomainError } from '../errors.ts';
import type { FamilyUploads } from '../family.ts';
import type { Services } from '../services.ts';
import { type UploadTarget, uploadedFileView } from '../uploads/receive.ts';
import type { UploadAddress } from '../uploads/tokens.ts';
import { uploaderRefusal } from './access.ts';
import { COFFRE_UPLOAD_KIND, itemIdOf } from './ids.ts';

/** A vault item's upload URL: where its bytes go, and whether the item and its vault still take them. */
export async function coffreUploadTarget(services: Services, address: UploadAddress): Promise<UploadTarget> {
  const queries = createCoffreQueries(services.db);
  const [coffre, item] = await Promise.all([queries.findById(address.owner), queries.itemById(address.file)]);
  if (!coffre || !item || item.coffre_id !== coffre.id) throw new DomainError('not_found', 'No such upload URL.');
  if (coffre.status !== 'active' || item.status === 'deleted' || item.status === 'rejected') {
    throw new DomainError('not_found', 'This vault item is gone and accepts no uploads.', { kind: 'gone' });
  }
  // A member's upload URL lasts as long as their right to upload: revoking them or taking `upload`
  // away refuses it at once, on HEAD as on PUT.
  if (item.uploaded_by_member_id !== null) {
    const refused = uploaderRefusal(await queries.memberById(item.uploaded_by_member_id));
    if (refused) throw refused;
  }
  const late = item.upload_deadline.getTime() <= Date.now();
  const refusal =
    item.status === 'uploading' && !late
      ? null
      : new DomainError('validation_error', 'This vault item no longer accepts uploads.', { kind: 'conflict' });
  return {
    table: 'coffre_items',
    holder: `coffre:${coffre.id}`,
    file: item,
    mode: 'server',
    refusal,
    uploaded: (fileId) => services.workflows.coffres.itemUploaded(fileId),
    present: (stored) => uploadedFileView(stored, itemIdOf(stored.id), 'coffre_item'),
  };
}

/** The kind this family's upload URLs carry, and their lookup (lib/uploads/resolve.ts). */
export const coffreUploads = { kind: COFFRE_UPLOAD_KIND, target: coffreUploadTarget } satisfies FamilyUploads;
