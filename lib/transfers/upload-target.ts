import { createTransferQueries } from '../db/queries/transfers.ts';
import { DomainError } from '../errors.ts';
import type { FamilyUploads } from '../family.ts';
import type { Services } from '../services.ts';
import type { UploadTarget } from '../uploads/receive.ts';
import type { UploadAddress } from '../uploads/tokens.ts';
import { transferPhase } from './phase.ts';
import { presentFile } from './present.ts';

/** A transfer file's upload URL: where its bytes go, and whether the transfer still takes them. */
export async function transferUploadTarget(services: Services, address: UploadAddress): Promise<UploadTarget> {
  const queries = createTransferQueries(services.db);
  const [transfer, file] = await Promise.all([queries.findById(address.owner), queries.file(address.file)]);
  if (!transfer || !file || file.transfer_id !== transfer.id) throw new DomainError('not_found', 'No such upload URL.');
  // An ended transfer's URLs are dead, whatever their files' state: gone is final for clients
  // (a conflict would have them wait and retry), and nothing is stored or signalled.
  if (transfer.status === 'expired' || transfer.status === 'deleted') {
    const reason = transfer.status === 'expired' ? 'expired' : (transfer.status_reason ?? 'revoked');
    throw new DomainError('not_found', `This transfer has ended (${reason}) and accepts no uploads.`, {
      kind: 'gone',
      details: { reason },
    });
  }
  const refusal =
    transferPhase(transfer) === 'uploading'
      ? null
      : new DomainError(
          'validation_error',
          `This transfer no longer accepts uploads (${transfer.status_reason ?? transfer.status}).`,
          { kind: 'conflict' },
        );
  return {
    table: 'transfer_files',
    holder: `transfer:${transfer.id}`,
    file,
    mode: transfer.encryption_mode,
    refusal,
    uploaded: (fileId) => services.workflows.transfers.fileUploaded(transfer.id, fileId),
    present: (stored) => presentFile({ ...stored, transfer_id: file.transfer_id, position: file.position }),
  };
}

/** The kind this family's upload URLs carry, and their lookup (lib/uploads/resolve.ts). */
export const transferUploads = { kind: 'transfer', target: transferUploadTarget } satisfies FamilyUploads;
