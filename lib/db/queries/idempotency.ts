import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { sql } from '../sql.ts';
import type { Tenant } from './api-keys.ts';

const recordRow = z.object({
  request_fingerprint: z.string(),
  state: z.enum(['in_progress', 'completed']),
  response_status: z.number().int().nullable(),
  response_body: z.unknown(),
});
export type IdempotencyRecord = z.infer<typeof recordRow>;

export function createIdempotencyQueries(db: CommonQueryMethods) {
  return {
    /** Claims the key for this request; false when another request holds or held it. */
    async claim(tenant: Tenant, key: string, fingerprint: string): Promise<boolean> {
      // Keys are remembered for 24 hours; the tenant's older records go first.
      await db.query(sql.typeAlias('void')`
        DELETE FROM idempotency_records
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
          AND created_at < now() - interval '24 hours'`);
      const claimed = await db.maybeOneFirst(sql.type(z.object({ claimed: z.boolean() }))`
        INSERT INTO idempotency_records (workspace_id, environment, idempotency_key, request_fingerprint, state)
        VALUES (${tenant.workspaceId}, ${tenant.environment}, ${key}, ${fingerprint}, 'in_progress')
        ON CONFLICT DO NOTHING
        RETURNING true AS claimed`);
      return claimed === true;
    },

    async find(tenant: Tenant, key: string): Promise<IdempotencyRecord | null> {
      return db.maybeOne(sql.type(recordRow)`
        SELECT request_fingerprint, state, response_status, response_body FROM idempotency_records
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment} AND idempotency_key = ${key}`);
    },

    async complete(tenant: Tenant, key: string, status: number, body: unknown): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE idempotency_records
        SET state = 'completed', response_status = ${status}, response_body = ${sql.jsonb((body ?? null) as never)}
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment} AND idempotency_key = ${key}`);
    },

    /** Forgets a claim whose request failed on our side, so the client may retry. */
    async release(tenant: Tenant, key: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        DELETE FROM idempotency_records
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
          AND idempotency_key = ${key} AND state = 'in_progress'`);
    },
  };
}
