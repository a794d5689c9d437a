import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { PageWindow } from '../../pagination.ts';
import type { Tenant } from '../../tenancy.ts';
import { ENVIRONMENTS } from '../../vocabulary.ts';
import { olderThanCursor } from '../paging.ts';
import { sql } from '../sql.ts';

export const webhookRow = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  name: z.string(),
  description: z.string().nullable(),
  url: z.string(),
  events: z.array(z.string()),
  is_active: z.boolean(),
  secret_sealed: z.string(),
  previous_secret_sealed: z.string().nullable(),
  previous_secret_expires_at: z.date().nullable(),
  success_count: z.number().int(),
  failure_count: z.number().int(),
  last_triggered_at: z.date().nullable(),
  last_status: z.number().int().nullable(),
  failing_since: z.date().nullable(),
  disabled_reason: z.string().nullable(),
  created_at: z.date(),
});
export type WebhookRow = z.infer<typeof webhookRow>;

const columns = sql.fragment`
  w.id, w.workspace_id, w.environment, w.name, w.description, w.url, w.events, w.is_active, w.secret_sealed,
  w.previous_secret_sealed, w.previous_secret_expires_at, w.success_count, w.failure_count, w.last_triggered_at,
  w.last_status, w.failing_since, w.disabled_reason, w.created_at`;

export type WebhookChanges = Partial<{
  name: string;
  description: string | null;
  url: string;
  events: string[];
  isActive: boolean;
}>;

export function createWebhookQueries(db: CommonQueryMethods) {
  return {
    async insert(
      tenant: Tenant,
      hook: { name: string; description: string | null; url: string; events: string[]; secretSealed: string },
    ): Promise<WebhookRow> {
      return db.one(sql.type(webhookRow)`
        INSERT INTO webhooks AS w (workspace_id, environment, name, description, url, events, secret_sealed)
        VALUES (${tenant.workspaceId}, ${tenant.environment}, ${hook.name}, ${hook.description}, ${hook.url},
                ${sql.array(hook.events, 'text')}, ${hook.secretSealed})
        RETURNING ${columns}`);
    },

    /** Serialises creations per workspace and environment, so the 25-webhook cap holds under concurrency. */
    async lockTenant(tenant: Tenant): Promise<void> {
      await db.oneFirst(sql.type(z.object({ locked: z.number() }))`
        SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtext(${`webhooks:${tenant.workspaceId}:${tenant.environment}`}))`);
    },

    async count(tenant: Tenant): Promise<number> {
      return db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
        SELECT count(*) AS count FROM webhooks
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}`);
    },

    async find(tenant: Tenant, id: string): Promise<WebhookRow | null> {
      return db.maybeOne(sql.type(webhookRow)`
        SELECT ${columns} FROM webhooks w
        WHERE w.id = ${id} AND w.workspace_id = ${tenant.workspaceId} AND w.environment = ${tenant.environment}`);
    },

    async list(tenant: Tenant, window: PageWindow): Promise<readonly WebhookRow[]> {
      return db.any(sql.type(webhookRow)`
        SELECT ${columns} FROM webhooks w
        WHERE w.workspace_id = ${tenant.workspaceId} AND w.environment = ${tenant.environment}
          AND ${olderThanCursor(window, 'w')}
        ORDER BY w.created_at DESC, w.id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },

    async update(id: string, changes: WebhookChanges): Promise<void> {
      const sets = [
        changes.name !== undefined && sql.fragment`name = ${changes.name}`,
        changes.description !== undefined && sql.fragment`description = ${changes.description}`,
        changes.url !== undefined && sql.fragment`url = ${changes.url}`,
        changes.events !== undefined && sql.fragment`events = ${sql.array(changes.events, 'text')}`,
        changes.isActive !== undefined &&
          sql.fragment`is_active = ${changes.isActive}, failing_since = NULL, disabled_reason = NULL`,
      ].filter((s) => s !== false);
      if (sets.length === 0) return;
      await db.query(sql.typeAlias('void')`UPDATE webhooks SET ${sql.join(sets, sql.fragment`, `)} WHERE id = ${id}`);
    },

    async rotateSecret(id: string, secretSealed: string, previousUntil: Date): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE webhooks
        SET previous_secret_sealed = secret_sealed, previous_secret_expires_at = ${sql.timestamp(previousUntil)},
            secret_sealed = ${secretSealed}
        WHERE id = ${id}`);
    },

    async findById(id: string): Promise<WebhookRow | null> {
      return db.maybeOne(sql.type(webhookRow)`SELECT ${columns} FROM webhooks w WHERE w.id = ${id}`);
    },

    /** Counts an attempt's outcome; a failure starts (or continues) the failing streak a success ends. */
    async recordOutcome(id: string, outcome: { succeeded: boolean; statusCode: number | null }): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE webhooks SET
          success_count = success_count + ${outcome.succeeded ? 1 : 0},
          failure_count = failure_count + ${outcome.succeeded ? 0 : 1},
          last_triggered_at = ms_now(),
          last_status = ${outcome.statusCode},
          failing_since = CASE WHEN ${outcome.succeeded} THEN NULL ELSE coalesce(failing_since, ms_now()) END
        WHERE id = ${id}`);
    },

    /**
     * Counts a batch of attempts, listed in the order they were made, as recordOutcome would one
     * by one: a webhook whose last attempt failed keeps its streak, or starts one if an attempt of
     * the batch succeeded before. Rows are locked in id order, so batches never deadlock each other.
     */
    async recordOutcomes(
      outcomes: readonly { webhookId: string; succeeded: boolean; statusCode: number | null }[],
    ): Promise<void> {
      const byHook = new Map<string, { ok: number; failed: number; lastOk: boolean; lastStatus: number | null }>();
      for (const outcome of outcomes) {
        const counts = byHook.get(outcome.webhookId) ?? { ok: 0, failed: 0, lastOk: false, lastStatus: null };
        if (outcome.succeeded) counts.ok++;
        else counts.failed++;
        counts.lastOk = outcome.succeeded;
        counts.lastStatus = outcome.statusCode;
        byHook.set(outcome.webhookId, counts);
      }
      if (byHook.size === 0) return;
      const ids = [...byHook.keys()].sort();
      const rows = ids.map((id) => {
        const c = byHook.get(id) ?? { ok: 0, failed: 0, lastOk: false, lastStatus: null };
        return [id, c.ok, c.failed, c.lastOk, c.ok > 0, c.lastStatus];
      });
      await db.query(sql.typeAlias('void')`
        UPDATE webhooks w SET
          success_count = w.success_count + u.ok,
          failure_count = w.failure_count + u.failed,
          last_triggered_at = ms_now(),
          last_status = u.last_status,
          failing_since = CASE WHEN u.last_ok THEN NULL WHEN u.any_ok THEN ms_now()
                               ELSE coalesce(w.failing_since, ms_now()) END
        FROM ${sql.unnest(rows, ['uuid', 'int4', 'int4', 'bool', 'bool', 'int4'])}
          AS u(id, ok, failed, last_ok, any_ok, last_status),
          (SELECT id FROM webhooks WHERE id = ANY (${sql.array(ids, 'uuid')}) ORDER BY id FOR NO KEY UPDATE) locked
        WHERE w.id = u.id AND locked.id = u.id`);
    },

    /** Turns the webhook off when it has failed without a single success for `afterMs`; null if it stays on. */
    async disableIfFailingFor(id: string, afterMs: number): Promise<WebhookRow | null> {
      return db.maybeOne(sql.type(webhookRow)`
        UPDATE webhooks AS w SET is_active = false, disabled_reason = 'failing'
        WHERE w.id = ${id} AND w.is_active AND w.failing_since IS NOT NULL
          AND w.failing_since <= ms_now() - make_interval(secs => ${afterMs / 1000})
        RETURNING ${columns}`);
    },

    /** Active webhooks of the tenant subscribed to `type` (or to every type with `*`). */
    async subscribers(tenant: Tenant, type: string): Promise<readonly { id: string }[]> {
      return db.any(sql.type(z.object({ id: z.uuid() }))`
        SELECT id FROM webhooks
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment} AND is_active
          AND (${type} = ANY (events) OR '*' = ANY (events))`);
    },

    async remove(id: string): Promise<void> {
      await db.query(sql.typeAlias('void')`DELETE FROM webhooks WHERE id = ${id}`);
    },
  };
}
