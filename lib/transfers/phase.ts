import type { TransferRow } from '../db/queries/transfers.ts';

// The spec gives a transfer four public statuses (TRANSFER_STATUSES in
// lib/vocabulary.ts) and no word for "waiting for its files": such a transfer
// reports `scanning`, as one whose files are being scanned does, and
// `status_reason` (`uploading`, then `scanning`) tells the two apart. Code that
// acts on the difference asks for the phase rather than testing both columns.

/** Where a transfer is in its life, as the row records it. */
export type TransferPhase = 'uploading' | 'scanning' | 'active' | 'expired' | 'deleted';

export function transferPhase(transfer: Pick<TransferRow, 'status' | 'status_reason'>): TransferPhase {
  if (transfer.status !== 'scanning') return transfer.status;
  return transfer.status_reason === 'uploading' ? 'uploading' : 'scanning';
}
