import { randomUUID } from 'node:crypto';
import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { EventData, EventType } from '../../events/catalog.ts';
import type { Tenant } from '../../tenancy.ts';
import { ENVIRONMENTS } from '../../vocabulary.ts';
import { sql } from '../sql.ts';

export const eventRow = z.object({
  id: z.string(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  type: z.string(),
  data: z.record(z.string(), z.unknown()),
  created_at: z.date(),
});
export type EventRow = z.infer<typeof eventRow>;

export const dispatchableEvent = eventRow.extend({ caused_by_rules: z.array(z.uuid()) });
export type DispatchableEvent = z.infer<typeof dispatchableEvent>;

export type RecordOptions = {
  /** The rules whose actions led here (rule loop guard; see migrations/0004_deliveries.sql). */
  causedByRules?: readonly string[];
  /** Events addressed to one receiver (a test ping) are never fanned out. */
  dispatched?: boolean;
};

export function createEventQueries(db: CommonQueryMethods) {
  return {
    /**
     * Records a domain event; call it on the transaction that makes the change. Only a type of the
     * catalog, with the payload its schema declares, compiles (lib/events/catalog.ts).
     */
    async record<T extends EventType>(
      tenant: Tenant,
      type: T,
      data: EventData<T>,
      options: RecordOptions = {},
    ): Promise<EventRow> {
      return db.one(sql.type(eventRow)`
        INSERT INTO events (id, workspace_id, environment, type, data, caused_by_rules, dispatched_at)
        VALUES (${`evt_${randomUUID().replaceAll('-', '')}`}, ${tenant.workspaceId}, ${tenant.environment}, ${type},
                ${sql.jsonb(data as never)}, ${sql.array(options.causedByRules ?? [], 'uuid')},
                ${options.dispatched ? sql.fragment`ms_now()` : null})
        RETURNING id, workspace_id, environment, type, data, created_at`);
    },

    async find(id: string): Promise<DispatchableEvent | null> {
      return db.maybeOne(sql.type(dispatchableEvent)`
        SELECT id, workspace_id, environment, type, data, created_at, caused_by_rules FROM events WHERE id = ${id}`);
    },

    /** The event a rule's action recorded in answer to `causeEventId`, if it did already. */
    async findCausedBy(type: string, ruleId: string, causeEventId: string): Promise<EventRow | null> {
      return db.maybeOne(sql.type(eventRow)`
        SELECT id, workspace_id, environment, type, data, created_at FROM events
        WHERE type = ${type} AND ${ruleId} = ANY (caused_by_rules) AND data ->> 'cause_event_id' = ${causeEventId}
        LIMIT 1`);
    },

    /**
     * The oldest events no dispatcher has handled, locked for this transaction;
     * rows another dispatcher holds are skipped, so dispatchers can run side by side.
     * NO KEY UPDATE, not UPDATE: the deliveries started meanwhile insert rows that
     * reference these events, and their foreign-key checks must not wait for the commit.
     */
    async claimUndispatched(limit: number): Promise<readonly DispatchableEvent[]> {
      return db.any(sql.type(dispatchableEvent)`
        SELECT id, workspace_id, environment, type, data, created_at, caused_by_rules FROM events
        WHERE dispatched_at IS NULL
        ORDER BY created_at, id
        LIMIT ${limit}
        FOR NO KEY UPDATE SKIP LOCKED`);
    },

    /** A tenant's events of one type, newest first, in the order they were recorded. */
    async listByType(tenant: Tenant, type: string): Promise<readonly EventRow[]> {
      return db.any(sql.type(eventRow)`
        SELECT id, workspace_id, environment, type, data, created_at FROM events
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment} AND type = ${type}
        ORDER BY created_at DESC, recorded DESC`);
    },
  };
}
