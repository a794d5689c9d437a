import type { CommonQueryMethods, DatabasePool, DatabaseTransactionConnection } from 'slonik';
import { createAuditQueries, type ErasureMatch } from '../db/queries/audit.ts';
import type { Tenant } from '../tenancy.ts';

// What retention and erasure do to the audit log without breaking its chain (docs/audit.md,
// "Integrity"): a purge removes the oldest links and moves the anchor verification starts from;
// an erasure removes personal values and keeps the digest the hash covers.

export type { ErasureMatch };

const PURGE_BATCH = 5000;

/**
 * Deletes the tenant's entries dated before `cutoff`, oldest first, a batch per transaction, each
 * moving the chain's anchor to the last entry it deleted. Returns how many were deleted.
 */
export async function purgeAuditBefore(
  db: DatabasePool | DatabaseTransactionConnection,
  tenant: Tenant,
  cutoff: Date,
): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await db.transaction((tx) => createAuditQueries(tx).purgeOldest(tenant, cutoff, PURGE_BATCH));
    total += deleted;
    if (deleted < PURGE_BATCH) return total;
  }
}

/**
 * Pseudonymises a person's entries in every environment of the workspace: the entries of these
 * users, or from these addresses, lose their address, user agent, country and personal metadata
 * keys, and are marked erased. The chain still verifies. Returns how many entries were erased.
 */
export function eraseAuditPersonalData(
  tx: CommonQueryMethods,
  workspaceId: string,
  match: ErasureMatch,
): Promise<number> {
  return createAuditQueries(tx).erasePersonalData(workspaceId, match);
}
