import { randomUUID } from 'node:crypto';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { sql } from '../sql.ts';
import type { Tenant } from './api-keys.ts';

export const eventRow = z.object({
  id: z.string(),
  workspace_id: z.uuid(),
  environment: z.enum(['live', 'test', 'sandbox']),
  type: z.string(),
  data: z.record(z.string(), z.unknown()),
  created_at: z.date(),
});
export type EventRow = z.infer<typeof eventRow>;

export function createEventQueries(db: CommonQueryMethods) {
  return {
    /** Records a domain event; call it on the transaction that makes the change. */
    async record(tenant: Tenant, type: string, data: Record<string, unknown>): Promise<EventRow> {
      return db.one(sql.type(eventRow)`
        INSERT INTO events (id, workspace_id, environment, type, data)
        VALUES (${`evt_${randomUUID().replaceAll('-', '')}`}, ${tenant.workspaceId}, ${tenant.environment}, ${type},
                ${sql.jsonb(data as never)})
        RETURNING id, workspace_id, environment, type, data, created_at`);
    },

    /** How often `type` fired for one transfer since a moment: throttles password guessing. */
    async countForTransfer(type: string, transferId: string, since: Date): Promise<number> {
      return db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
        SELECT count(*) AS count FROM events
        WHERE type = ${type} AND data -> 'transfer' ->> 'id' = ${transferId} AND created_at >= ${sql.timestamp(since)}`);
    },

    async listByType(tenant: Tenant, type: string): Promise<readonly EventRow[]> {
      return db.any(sql.type(eventRow)`
        SELECT id, workspace_id, environment, type, data, created_at FROM events
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment} AND type = ${type}
        ORDER BY created_at DESC`);
    },
  };
}
