import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { Tenant } from '../../tenancy.ts';
import { sql } from '../sql.ts';

// The sandbox's quotas across families (lib/sandbox.ts): what a workspace created in the last
// 24 hours, counted under a lock per family and tenant, and the download caps of the families
// whose files have no download counter of their own. Tables are named from these maps only.

/** What a sandbox workspace may create 25 of per rolling 24 hours, and the table that holds it. */
const CREATED = {
  coffre_item: 'coffre_items',
  intake_submission: 'intake_documents',
  collection: 'collections',
} as const;
export type DailyQuota = keyof typeof CREATED;

/** Files whose downloads the sandbox caps, and the table that counts them (migration 0027). */
const COUNTED = { coffre_item: 'coffre_items', intake_file: 'intake_files' } as const;
export type CountedFile = keyof typeof COUNTED;

export function createSandboxQueries(db: CommonQueryMethods) {
  return {
    /**
     * Serialises, until the transaction ends, the creations of `quota` in one workspace and
     * environment, so that each counts the ones committed before it.
     */
    async lockQuota(tenant: Tenant, quota: DailyQuota): Promise<void> {
      const key = `${tenant.workspaceId}:${tenant.environment}`;
      await db.one(sql.type(z.object({ locked: z.literal(true) }))`
        SELECT true AS locked FROM (SELECT pg_advisory_xact_lock(hashtext(${`${quota}-quota`}), hashtext(${key}))) AS lock`);
    },

    async countCreatedSince(tenant: Tenant, quota: DailyQuota, since: Date): Promise<number> {
      return db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
        SELECT count(*) AS count FROM ${sql.identifier([CREATED[quota]])}
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
          AND created_at >= ${sql.timestamp(since)}`);
    },

    /**
     * Counts one download of each file of `ids` still under `limit`, in one statement (so
     * concurrent downloads cannot pass the cap together). Answers the ids counted.
     */
    async countDownloads(kind: CountedFile, ids: readonly string[], limit: number): Promise<ReadonlySet<string>> {
      if (ids.length === 0) return new Set();
      const counted = await db.anyFirst(sql.type(z.object({ id: z.string() }))`
        UPDATE ${sql.identifier([COUNTED[kind]])} SET download_count = download_count + 1
        WHERE id = ANY(${sql.array(ids, 'uuid')}) AND download_count < ${limit}
        RETURNING id::text AS id`);
      return new Set(counted);
    },
  };
}
