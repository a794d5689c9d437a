import { heartbeat } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import { createRetentionQueries } from '../lib/db/queries/retention.ts';
import { type PurgeCounts, purgeTenant } from '../lib/retention/purge.ts';
import type { ObjectStore } from '../lib/storage/object-store.ts';
import type { Environment } from '../lib/vocabulary.ts';

// The purge's side effects (workflows/purgeSandbox.ts). Each is idempotent: a purge deletes only
// what is still older than its cutoff, so a retry after a crash goes on where the last one stopped.

export function createRetentionActivities(deps: { db: DatabasePool; objects: ObjectStore }) {
  return {
    /** Up to `limit` workspace ids after `after`, in id order. */
    async listWorkspacesAfter(after: string | null, limit: number): Promise<readonly string[]> {
      return createRetentionQueries(deps.db).workspacesAfter(after, limit);
    },

    /**
     * Purges one workspace's `environment` of everything older than `cutoff` (ISO 8601), in every
     * family, heartbeating between batches.
     */
    async purgeEnvironment(workspaceId: string, environment: Environment, cutoff: string): Promise<PurgeCounts> {
      return purgeTenant(
        { db: deps.db, objects: deps.objects, progress: () => heartbeat() },
        { tenant: { workspaceId, environment }, cutoff: new Date(cutoff) },
      );
    },
  };
}
