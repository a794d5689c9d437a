import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { PageWindow } from '../../pagination.ts';
import { DELIVERY_STATUSES, DELIVERY_TRIGGERS, type DeliveryTrigger } from '../../vocabulary.ts';
import { olderThanCursor } from '../paging.ts';
import { sql } from '../sql.ts';

export const deliveryRow = z.object({
  id: z.uuid(),
  webhook_id: z.uuid(),
  event_id: z.string(),
  event_type: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempt_count: z.number().int(),
  next_attempt_at: z.date().nullable(),
  created_at: z.date(),
  completed_at: z.date().nullable(),
});
export type DeliveryRow = z.infer<typeof deliveryRow>;

export const attemptRow = z.object({
  id: z.uuid(),
  delivery_id: z.uuid(),
  webhook_id: z.uuid(),
  event_id: z.string(),
  event_type: z.string(),
  attempt: z.number().int(),
  trigger: z.enum(DELIVERY_TRIGGERS),
  url: z.string(),
  status_code: z.number().int().nullable(),
  succeeded: z.boolean(),
  duration_ms: z.number().int(),
  error: z.string().nullable(),
  response_body: z.string().nullable(),
  next_retry_at: z.date().nullable(),
  created_at: z.date(),
});
export type AttemptRow = z.infer<typeof attemptRow>;

const deliveryColumns = sql.fragment`
  d.id, d.webhook_id, d.event_id, d.event_type, d.status, d.attempt_count, d.next_attempt_at, d.created_at,
  d.completed_at`;
const attemptColumns = sql.fragment`
  a.id, a.delivery_id, a.webhook_id, d.event_id, d.event_type, a.attempt, a.trigger, a.url, a.status_code,
  a.succeeded, a.duration_ms, a.error, a.response_body, a.next_retry_at, a.created_at`;

export type AttemptRecord = {
  attemptKey: string;
  trigger: DeliveryTrigger;
  url: string;
  statusCode: number | null;
  succeeded: boolean;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  nextRetryAt: Date | null;
};

export function createDeliveryQueries(db: CommonQueryMethods) {
  return {
    /** The delivery of an event to a webhook, created by its first attempt, locked for the attempt's record. */
    async openForUpdate(webhookId: string, eventId: string, eventType: string): Promise<DeliveryRow> {
      await db.query(sql.typeAlias('void')`
        INSERT INTO webhook_deliveries (webhook_id, event_id, event_type)
        VALUES (${webhookId}, ${eventId}, ${eventType})
        ON CONFLICT (webhook_id, event_id) DO NOTHING`);
      return db.one(sql.type(deliveryRow)`
        SELECT ${deliveryColumns} FROM webhook_deliveries d
        WHERE d.webhook_id = ${webhookId} AND d.event_id = ${eventId}
        FOR UPDATE`);
    },

    async find(webhookId: string, deliveryId: string): Promise<DeliveryRow | null> {
      return db.maybeOne(sql.type(deliveryRow)`
        SELECT ${deliveryColumns} FROM webhook_deliveries d WHERE d.id = ${deliveryId} AND d.webhook_id = ${webhookId}`);
    },

    async findAttemptByKey(attemptKey: string): Promise<AttemptRow | null> {
      return db.maybeOne(sql.type(attemptRow)`
        SELECT ${attemptColumns} FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE a.attempt_key = ${attemptKey}`);
    },

    /**
     * Records an attempt on a delivery locked by openForUpdate and moves the
     * delivery on: succeeded, pending with its next try, or failed when the
     * schedule has run out. Manual and test attempts never reopen a delivery.
     */
    async recordAttempt(delivery: DeliveryRow, attempt: AttemptRecord): Promise<AttemptRow> {
      const number = delivery.attempt_count + 1;
      const { id } = await db.one(sql.type(z.object({ id: z.uuid() }))`
        INSERT INTO webhook_delivery_attempts
          (delivery_id, webhook_id, attempt_key, attempt, trigger, url, status_code, succeeded, duration_ms, error,
           response_body, next_retry_at)
        VALUES (${delivery.id}, ${delivery.webhook_id}, ${attempt.attemptKey}, ${number}, ${attempt.trigger},
                ${attempt.url}, ${attempt.statusCode}, ${attempt.succeeded}, ${attempt.durationMs}, ${attempt.error},
                ${attempt.responseBody},
                ${attempt.nextRetryAt ? sql.timestamp(attempt.nextRetryAt) : null})
        RETURNING id`);
      const scheduled = attempt.trigger === 'scheduled';
      await db.query(sql.typeAlias('void')`
        UPDATE webhook_deliveries SET
          attempt_count = ${number},
          status = CASE
            WHEN ${attempt.succeeded} THEN 'succeeded'
            WHEN NOT ${scheduled} THEN status
            WHEN ${attempt.nextRetryAt !== null} THEN 'pending'
            ELSE 'failed' END,
          next_attempt_at = CASE WHEN ${scheduled} THEN ${attempt.nextRetryAt ? sql.timestamp(attempt.nextRetryAt) : null}::timestamptz
                                 ELSE next_attempt_at END,
          completed_at = CASE
            WHEN ${attempt.succeeded} OR (${scheduled} AND ${attempt.nextRetryAt === null}) THEN ms_now()
            ELSE completed_at END
        WHERE id = ${delivery.id}`);
      return db.one(sql.type(attemptRow)`
        SELECT ${attemptColumns} FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE a.id = ${id}`);
    },

    /** A delivery that will not be attempted again because its webhook was disabled. */
    async cancel(deliveryId: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, completed_at = ms_now()
        WHERE id = ${deliveryId} AND status = 'pending'`);
    },

    async listAttempts(
      webhookId: string,
      filters: { eventId?: string | undefined; deliveryId?: string | undefined },
      window: PageWindow,
    ): Promise<readonly AttemptRow[]> {
      return db.any(sql.type(attemptRow)`
        SELECT ${attemptColumns} FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE a.webhook_id = ${webhookId}
          AND ${filters.eventId === undefined ? sql.fragment`TRUE` : sql.fragment`d.event_id = ${filters.eventId}`}
          AND ${filters.deliveryId === undefined ? sql.fragment`TRUE` : sql.fragment`a.delivery_id = ${filters.deliveryId}`}
          AND ${olderThanCursor(window, 'a')}
        ORDER BY a.created_at DESC, a.id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },
  };
}
