import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { PageWindow } from '../../pagination.ts';
import { DELIVERY_STATUSES, DELIVERY_TRIGGERS, type DeliveryTrigger } from '../../vocabulary.ts';
import { olderThanCursor } from '../paging.ts';
import { sql } from '../sql.ts';
import { eventRow } from './events.ts';
import { webhookRow } from './webhooks.ts';

const sendingWebhook = webhookRow.pick({
  id: true,
  url: true,
  is_active: true,
  secret_sealed: true,
  previous_secret_sealed: true,
  previous_secret_expires_at: true,
});

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

/** A delivery the sender leased (lib/webhooks/sender.ts), with what its attempt needs. */
export const leasedDeliveryRow = z.object({
  delivery_id: z.uuid(),
  status: z.enum(DELIVERY_STATUSES),
  next_attempt_at: z.date().nullable(),
  /** Its first scheduled attempt is recorded: what is left is handing its retries over. */
  attempted: z.boolean(),
  /** Its tenant labels the retries' workflow (lib/temporal-search-attributes.ts). */
  event: eventRow.pick({ id: true, workspace_id: true, environment: true, type: true, data: true, created_at: true }),
  webhook: sendingWebhook,
});
export type LeasedDelivery = z.infer<typeof leasedDeliveryRow>;
const leasedRow = leasedDeliveryRow.omit({ event: true, webhook: true }).extend({
  event_id: z.string(),
  event_workspace_id: eventRow.shape.workspace_id,
  event_environment: eventRow.shape.environment,
  event_type: z.string(),
  event_data: eventRow.shape.data,
  event_created_at: z.date(),
  webhook_id: z.uuid(),
  ...sendingWebhook.omit({ id: true }).shape,
});

/** The event's and the webhook's columns of a leased delivery (events `e`, webhooks `w`). */
const leasedColumns = sql.fragment`
  e.id AS event_id, e.workspace_id AS event_workspace_id, e.environment AS event_environment,
  e.type AS event_type, e.data AS event_data, e.created_at AS event_created_at,
  w.id AS webhook_id, w.url, w.is_active, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_expires_at`;

function leasedDeliveryOf({
  event_id,
  event_workspace_id,
  event_environment,
  event_type,
  event_data,
  event_created_at,
  webhook_id,
  ...row
}: z.infer<typeof leasedRow>): LeasedDelivery {
  return {
    delivery_id: row.delivery_id,
    status: row.status,
    next_attempt_at: row.next_attempt_at,
    attempted: row.attempted,
    event: {
      id: event_id,
      workspace_id: event_workspace_id,
      environment: event_environment,
      type: event_type,
      data: event_data,
      created_at: event_created_at,
    },
    webhook: {
      id: webhook_id,
      url: row.url,
      is_active: row.is_active,
      secret_sealed: row.secret_sealed,
      previous_secret_sealed: row.previous_secret_sealed,
      previous_secret_expires_at: row.previous_secret_expires_at,
    },
  };
}

/** A first attempt the sender made, to record. */
export type FirstAttemptRecord = Omit<AttemptRecord, 'trigger'> & {
  deliveryId: string;
  webhookId: string;
  /** When the answer (or the failure) came; the attempt's created_at. */
  at: Date;
};

export function createDeliveryQueries(db: CommonQueryMethods) {
  return {
    /**
     * Queues a first attempt for each (event, active subscribed webhook) pair of these events, for
     * the senders, and stamps the events dispatched: one statement, as the dispatcher's last step.
     * The unique (webhook, event) makes a second pass over the same events add nothing. With
     * `lease`, up to `lease.limit` of the new deliveries are queued already leased to the caller's
     * sender, and returned as leaseDue returns them: the dispatcher hands them over without a
     * lease statement of their own, or a scan of the queue.
     */
    async queueFirstAttempts(
      eventIds: readonly string[],
      lease?: { limit: number; leaseMs: number },
    ): Promise<LeasedDelivery[]> {
      if (eventIds.length === 0) return [];
      const ids = sql.array(eventIds, 'text');
      const limit = lease?.limit ?? 0;
      // The NOTIFY is delivered at commit, to every sender listening, this process's included:
      // once per transaction, and only when a delivery was queued that no sender holds yet.
      const rows = await db.any(sql.type(leasedRow)`
        WITH candidates AS (
          SELECT w.id AS webhook_id, e.id AS event_id, e.type AS event_type,
            row_number() OVER (ORDER BY e.created_at, e.id, w.id) AS position
          FROM events e
          JOIN webhooks w ON w.workspace_id = e.workspace_id AND w.environment = e.environment AND w.is_active
            AND (e.type = ANY (w.events) OR '*' = ANY (w.events))
          WHERE e.id = ANY (${ids})
        ), queued AS (
          INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, sender_due_at, leased_until)
          SELECT webhook_id, event_id, event_type, ms_now(),
            CASE WHEN position <= ${limit}
              THEN now() + make_interval(secs => ${(lease?.leaseMs ?? 0) / 1000}) END
          FROM candidates
          ON CONFLICT (webhook_id, event_id) DO NOTHING
          RETURNING id, webhook_id, event_id, status, next_attempt_at, leased_until
        ), dispatched AS (
          UPDATE events SET dispatched_at = ms_now() WHERE id = ANY (${ids}) RETURNING id
        ), told AS (
          SELECT pg_notify('valise_deliveries', '') FROM queued WHERE leased_until IS NULL LIMIT 1
        )
        SELECT q.id AS delivery_id, q.status, q.next_attempt_at, false AS attempted,
          ${leasedColumns}
        FROM queued q JOIN events e ON e.id = q.event_id JOIN webhooks w ON w.id = q.webhook_id
        -- A one-time filter, evaluated even when no row is leased: it is what sends the NOTIFY.
        WHERE q.leased_until IS NOT NULL AND (SELECT count(*) FROM told) >= 0`);
      return rows.map(leasedDeliveryOf);
    },

    /**
     * Leases up to `limit` due deliveries of the sender's queue for `leaseMs`, oldest first, with
     * their event and webhook. Rows another sender holds are skipped; rows whose lease ran out
     * (their sender died) are due again.
     */
    async leaseDue(limit: number, leaseMs: number): Promise<LeasedDelivery[]> {
      const rows = await db.any(sql.type(leasedRow)`
        WITH due AS (
          SELECT id FROM webhook_deliveries
          WHERE sender_due_at IS NOT NULL AND sender_due_at <= now()
            AND (leased_until IS NULL OR leased_until <= now())
          ORDER BY sender_due_at
          LIMIT ${limit}
          FOR NO KEY UPDATE SKIP LOCKED
        ), leased AS (
          UPDATE webhook_deliveries d SET leased_until = now() + make_interval(secs => ${leaseMs / 1000})
          FROM due WHERE d.id = due.id
          RETURNING d.id, d.webhook_id, d.event_id, d.status, d.next_attempt_at
        )
        SELECT l.id AS delivery_id, l.status, l.next_attempt_at, scheduled.attempted IS NOT NULL AS attempted,
          ${leasedColumns}
        FROM leased l JOIN events e ON e.id = l.event_id JOIN webhooks w ON w.id = l.webhook_id
        -- A lookup per delivery: as an EXISTS, the planner may hash the whole attempts table instead.
        LEFT JOIN LATERAL (
          SELECT true AS attempted FROM webhook_delivery_attempts a
          WHERE a.delivery_id = l.id AND a.trigger = 'scheduled' LIMIT 1
        ) scheduled ON TRUE`);
      return rows.map(leasedDeliveryOf);
    },

    /**
     * Records the sender's first attempts, once each: an attempt whose key is recorded already (a
     * twin that took the delivery over when the lease ran out) or whose delivery is no longer on
     * the queue is dropped. Moves each delivery on as recordAttempt does; a delivery that failed
     * and will be retried stays on the queue, for its hand-over. Returns the attempts recorded.
     */
    async recordFirstAttempts(records: readonly FirstAttemptRecord[]): Promise<readonly FirstAttemptRecord[]> {
      if (records.length === 0) return [];
      // A twin that recorded first (it took the delivery over when this lease ran out) has moved the
      // delivery off the queue, or recorded the same attempt key, which the INSERT's ON CONFLICT skips.
      const locked = await db.any(sql.type(z.object({ id: z.uuid(), attempt_count: z.number().int() }))`
        SELECT d.id, d.attempt_count FROM webhook_deliveries d
        WHERE d.id = ANY (${sql.array(
          records.map((r) => r.deliveryId),
          'uuid',
        )}) AND d.status = 'pending' AND d.sender_due_at IS NOT NULL
        ORDER BY d.id
        FOR NO KEY UPDATE`);
      const counts = new Map(locked.map((row) => [row.id, row.attempt_count]));
      // A key twice in one batch is this process's own twin (its lease ran out while it POSTed): once.
      const seen = new Set<string>();
      const fresh = records.filter((r) => {
        if (!counts.has(r.deliveryId) || seen.has(r.attemptKey)) return false;
        seen.add(r.attemptKey);
        return true;
      });
      if (fresh.length === 0) return [];
      const rows = fresh.map((r) => {
        const number = (counts.get(r.deliveryId) ?? 0) + 1;
        const status = r.succeeded ? 'succeeded' : r.nextRetryAt ? 'pending' : 'failed';
        return [
          r.deliveryId,
          r.webhookId,
          r.attemptKey,
          number,
          r.url,
          r.statusCode,
          r.succeeded,
          r.durationMs,
          r.error,
          r.responseBody,
          r.nextRetryAt?.toISOString() ?? null,
          r.at.toISOString(),
          status,
        ];
      });
      const recorded = await db.anyFirst(sql.type(z.object({ attempt_key: z.string() }))`
        WITH input AS (
          SELECT * FROM ${sql.unnest(rows, [
            'uuid',
            'uuid',
            'text',
            'int4',
            'text',
            'int4',
            'bool',
            'int4',
            'text',
            'text',
            'timestamptz',
            'timestamptz',
            'text',
          ])} AS u(delivery_id, webhook_id, attempt_key, attempt, url, status_code, succeeded, duration_ms, error,
                   response_body, next_retry_at, created_at, status)
        ), inserted AS (
          INSERT INTO webhook_delivery_attempts
            (delivery_id, webhook_id, attempt_key, attempt, trigger, url, status_code, succeeded, duration_ms, error,
             response_body, next_retry_at, created_at)
          SELECT delivery_id, webhook_id, attempt_key, attempt, 'scheduled', url, status_code, succeeded, duration_ms,
                 error, response_body, next_retry_at, created_at
          FROM input
          ON CONFLICT (attempt_key) DO NOTHING
          RETURNING attempt_key
        )
        UPDATE webhook_deliveries d SET
          attempt_count = i.attempt,
          status = i.status,
          next_attempt_at = i.next_retry_at,
          completed_at = CASE WHEN i.status = 'pending' THEN NULL ELSE ms_now() END,
          sender_due_at = CASE WHEN i.status = 'pending' THEN d.sender_due_at END,
          leased_until = CASE WHEN i.status = 'pending' THEN d.leased_until END
        FROM input i JOIN inserted USING (attempt_key)
        WHERE d.id = i.delivery_id
        RETURNING i.attempt_key`);
      const keys = new Set(recorded);
      return fresh.filter((r) => keys.has(r.attemptKey));
    },

    /** Takes deliveries off the sender's queue: handed over to their workflow, finished, or cancelled. */
    async leaveQueue(deliveryIds: readonly string[]): Promise<void> {
      if (deliveryIds.length === 0) return;
      await db.query(sql.typeAlias('void')`
        UPDATE webhook_deliveries SET sender_due_at = NULL, leased_until = NULL
        WHERE id = ANY (${sql.array(deliveryIds, 'uuid')})`);
    },

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
        UPDATE webhook_deliveries SET status = 'cancelled', next_attempt_at = NULL, completed_at = ms_now(),
          sender_due_at = NULL, leased_until = NULL
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
