import { createGdprExportQueries } from '../db/queries/gdpr-exports.ts';
import type { FamilyPurgeDeps, PurgeScope } from '../family.ts';
import { exportPrefix } from './objects.ts';

// The exports' retention contract (lib/family.ts, FamilyRetention). An export keeps its objects
// under its tenant's prefix but not in the stored-file tables the generic purge reads, so it
// purges itself: each batch of old exports is locked, its objects deleted, then its rows, in one
// transaction, so that no object outlives the row that names it.

/** Deletes a tenant's exports older than the cutoff with their objects; the count deleted. */
export async function purgeGdprExports(deps: FamilyPurgeDeps, scope: PurgeScope): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deps.db.transaction(async (tx) => {
      const exports = createGdprExportQueries(tx);
      const old = await exports.lockOlderThan(scope.tenant, scope.cutoff, deps.batchSize);
      if (old.length === 0) return 0;
      for (const row of old) await deps.objects.removePrefix(exportPrefix(row));
      return exports.deleteByIds(
        scope.tenant,
        old.map((row) => row.id),
      );
    });
    total += deleted;
    deps.progress();
    if (deleted < deps.batchSize) return total;
  }
}
