import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { PageWindow } from '../../pagination.ts';
import { RULE_EXECUTION_STATUSES, type RuleExecutionStatus } from '../../rules/vocabulary.ts';
import type { Tenant } from '../../tenancy.ts';
import { ENVIRONMENTS } from '../../vocabulary.ts';
import { olderThanCursor } from '../paging.ts';
import { sql } from '../sql.ts';

// Automation rules and their executions (migrations/0005_rules.sql). The API
// manages rules; the worker reads the enabled rules of an event
// (findEnabledForEvent) and records what running them did (startExecution,
// finishExecution).

const jsonObject = z.record(z.string(), z.unknown());

export const ruleRow = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  name: z.string(),
  description: z.string().nullable(),
  trigger_event: z.string(),
  trigger_conditions: jsonObject.nullable(),
  action_type: z.string(),
  action_config: jsonObject,
  secret_sealed: z.string().nullable(),
  is_enabled: z.boolean(),
  trigger_count: z.number().int(),
  last_triggered_at: z.date().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type RuleRow = z.infer<typeof ruleRow>;

export const ruleExecutionRow = z.object({
  id: z.uuid(),
  rule_id: z.uuid(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  event_id: z.string(),
  event_type: z.string(),
  status: z.enum(RULE_EXECUTION_STATUSES),
  error: z.string().nullable(),
  duration_ms: z.number().int().nullable(),
  attempts: z.number().int(),
  created_at: z.date(),
  completed_at: z.date().nullable(),
});
export type RuleExecutionRow = z.infer<typeof ruleExecutionRow>;

const columns = sql.fragment`
  r.id, r.workspace_id, r.environment, r.name, r.description, r.trigger_event, r.trigger_conditions,
  r.action_type, r.action_config, r.secret_sealed, r.is_enabled, r.trigger_count, r.last_triggered_at,
  r.created_at, r.updated_at`;

const executionColumns = sql.fragment`
  e.id, e.rule_id, e.workspace_id, e.environment, e.event_id, e.event_type, e.status, e.error, e.duration_ms,
  e.attempts, e.created_at, e.completed_at`;

/** A rule as stored: already validated and normalised (lib/rules/service.ts). */
export type NewRule = {
  name: string;
  description: string | null;
  triggerEvent: string;
  triggerConditions: Record<string, unknown> | null;
  actionType: string;
  actionConfig: Record<string, unknown>;
  secretSealed: string | null;
  isEnabled: boolean;
};

export type RuleChanges = Partial<NewRule>;

export type RuleFilters = { triggerEvent?: string | undefined; isEnabled?: boolean | undefined };

const json = (value: Record<string, unknown>) => sql.jsonb(value as never);

export function createRuleQueries(db: CommonQueryMethods) {
  return {
    async insert(tenant: Tenant, rule: NewRule): Promise<RuleRow> {
      return db.one(sql.type(ruleRow)`
        INSERT INTO rules AS r (workspace_id, environment, name, description, trigger_event, trigger_conditions,
                                action_type, action_config, secret_sealed, is_enabled)
        VALUES (${tenant.workspaceId}, ${tenant.environment}, ${rule.name}, ${rule.description}, ${rule.triggerEvent},
                ${rule.triggerConditions === null ? null : json(rule.triggerConditions)}, ${rule.actionType},
                ${json(rule.actionConfig)}, ${rule.secretSealed}, ${rule.isEnabled})
        RETURNING ${columns}`);
    },

    /** Serialises creations per workspace and environment, so the rule cap holds under concurrency. */
    async lockTenant(tenant: Tenant): Promise<void> {
      await db.oneFirst(sql.type(z.object({ locked: z.number() }))`
        SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtext(${`rules:${tenant.workspaceId}:${tenant.environment}`}))`);
    },

    async count(tenant: Tenant): Promise<number> {
      return db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
        SELECT count(*) AS count FROM rules
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}`);
    },

    /** The rule, if it belongs to the tenant; `forUpdate` locks it until the transaction ends. */
    async find(tenant: Tenant, id: string, options: { forUpdate?: boolean } = {}): Promise<RuleRow | null> {
      return db.maybeOne(sql.type(ruleRow)`
        SELECT ${columns} FROM rules r
        WHERE r.id = ${id} AND r.workspace_id = ${tenant.workspaceId} AND r.environment = ${tenant.environment}
        ${options.forUpdate ? sql.fragment`FOR UPDATE` : sql.fragment``}`);
    },

    async list(tenant: Tenant, filters: RuleFilters, window: PageWindow): Promise<readonly RuleRow[]> {
      const conditions = [
        sql.fragment`r.workspace_id = ${tenant.workspaceId}`,
        sql.fragment`r.environment = ${tenant.environment}`,
        filters.triggerEvent !== undefined && sql.fragment`r.trigger_event = ${filters.triggerEvent}`,
        filters.isEnabled !== undefined && sql.fragment`r.is_enabled = ${filters.isEnabled}`,
        olderThanCursor(window, 'r'),
      ].filter((c) => c !== false);
      return db.any(sql.type(ruleRow)`
        SELECT ${columns} FROM rules r
        WHERE ${sql.join(conditions, sql.fragment` AND `)}
        ORDER BY r.created_at DESC, r.id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },

    /** Applies the changes and returns the rule as it now is (null when it no longer exists). */
    async update(id: string, changes: RuleChanges): Promise<RuleRow | null> {
      const sets = [
        changes.name !== undefined && sql.fragment`name = ${changes.name}`,
        changes.description !== undefined && sql.fragment`description = ${changes.description}`,
        changes.triggerEvent !== undefined && sql.fragment`trigger_event = ${changes.triggerEvent}`,
        changes.triggerConditions !== undefined &&
          sql.fragment`trigger_conditions = ${changes.triggerConditions === null ? null : json(changes.triggerConditions)}`,
        changes.actionType !== undefined && sql.fragment`action_type = ${changes.actionType}`,
        changes.actionConfig !== undefined && sql.fragment`action_config = ${json(changes.actionConfig)}`,
        changes.secretSealed !== undefined && sql.fragment`secret_sealed = ${changes.secretSealed}`,
        changes.isEnabled !== undefined && sql.fragment`is_enabled = ${changes.isEnabled}`,
        sql.fragment`updated_at = ms_now()`,
      ].filter((s) => s !== false);
      return db.maybeOne(sql.type(ruleRow)`
        UPDATE rules AS r SET ${sql.join(sets, sql.fragment`, `)} WHERE r.id = ${id}
        RETURNING ${columns}`);
    },

    /** Deletes the tenant's rule (its executions go with it); false when there was none. */
    async remove(tenant: Tenant, id: string): Promise<boolean> {
      const deleted = await db.maybeOne(sql.type(z.object({ id: z.uuid() }))`
        DELETE FROM rules
        WHERE id = ${id} AND workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
        RETURNING id`);
      return deleted !== null;
    },

    // ---- For the worker. ----

    /** Enabled rules of these workspaces for these triggers: the dispatcher's one query per batch of events. */
    async findEnabledForTriggers(
      workspaceIds: readonly string[],
      triggers: readonly string[],
    ): Promise<readonly RuleRow[]> {
      if (workspaceIds.length === 0 || triggers.length === 0) return [];
      return db.any(sql.type(ruleRow)`
        SELECT ${columns} FROM rules r
        WHERE r.is_enabled AND r.workspace_id = ANY (${sql.array(workspaceIds, 'uuid')})
          AND r.trigger_event = ANY (${sql.array(triggers, 'text')})
        ORDER BY r.created_at, r.id`);
    },

    async findById(id: string): Promise<RuleRow | null> {
      return db.maybeOne(sql.type(ruleRow)`SELECT ${columns} FROM rules r WHERE r.id = ${id}`);
    },

    /** The tenant's enabled rules for an event type, oldest first (the order they run in). */
    async findEnabledForEvent(tenant: Tenant, eventType: string): Promise<readonly RuleRow[]> {
      return db.any(sql.type(ruleRow)`
        SELECT ${columns} FROM rules r
        WHERE r.workspace_id = ${tenant.workspaceId} AND r.environment = ${tenant.environment}
          AND r.trigger_event = ${eventType} AND r.is_enabled
        ORDER BY r.created_at, r.id`);
    },

    /**
     * Records that `rule` starts running for `event`, once per (rule, event). A
     * new execution starts `running` with attempts 1. When one exists and is
     * still `running` (a worker died) or `failed`, it is run again: attempts + 1,
     * back to `running`. When it already `succeeded` or was `skipped`, nothing
     * changes and the result is null: do not run the action again.
     */
    async startExecution(
      rule: Pick<RuleRow, 'id' | 'workspace_id' | 'environment'>,
      event: { id: string; type: string },
    ): Promise<RuleExecutionRow | null> {
      return db.maybeOne(sql.type(ruleExecutionRow)`
        INSERT INTO rule_executions AS e (rule_id, workspace_id, environment, event_id, event_type, status, attempts)
        VALUES (${rule.id}, ${rule.workspace_id}, ${rule.environment}, ${event.id}, ${event.type}, 'running', 1)
        ON CONFLICT (rule_id, event_id) DO UPDATE
          SET attempts = e.attempts + 1, status = 'running', error = NULL, duration_ms = NULL, completed_at = NULL
          WHERE e.status IN ('running', 'failed')
        RETURNING ${executionColumns}`);
    },

    /**
     * Ends a running execution. When it ends `succeeded` or `failed` (the rule
     * matched, so it triggered either way), the same statement adds one to the
     * rule's trigger_count and sets its last_triggered_at, once per execution
     * even if a retry finishes it again. Null when the execution is not running.
     */
    async finishExecution(
      id: string,
      outcome: { status: Exclude<RuleExecutionStatus, 'running'>; error?: string | null; durationMs?: number | null },
    ): Promise<RuleExecutionRow | null> {
      const counts = outcome.status === 'succeeded' || outcome.status === 'failed';
      const durationMs =
        outcome.durationMs === undefined || outcome.durationMs === null
          ? null
          : Math.min(2_147_483_647, Math.max(0, Math.round(outcome.durationMs)));
      return db.maybeOne(sql.type(ruleExecutionRow)`
        WITH finished AS (
          UPDATE rule_executions AS e
          SET status = ${outcome.status}, error = ${outcome.error ?? null}, duration_ms = ${durationMs},
              completed_at = ms_now(), counted = e.counted OR ${counts}
          FROM (SELECT counted AS was_counted FROM rule_executions WHERE id = ${id} FOR UPDATE) AS prev
          WHERE e.id = ${id} AND e.status = 'running'
          RETURNING ${executionColumns}, prev.was_counted
        ), bumped AS (
          UPDATE rules AS r
          SET trigger_count = r.trigger_count + 1, last_triggered_at = f.completed_at
          FROM finished f
          WHERE r.id = f.rule_id AND ${counts} AND NOT f.was_counted
        )
        SELECT e.id, e.rule_id, e.workspace_id, e.environment, e.event_id, e.event_type, e.status, e.error,
               e.duration_ms, e.attempts, e.created_at, e.completed_at
        FROM finished e`);
    },

    async findExecution(id: string): Promise<RuleExecutionRow | null> {
      return db.maybeOne(sql.type(ruleExecutionRow)`
        SELECT ${executionColumns} FROM rule_executions e WHERE e.id = ${id}`);
    },

    /** A rule's executions, newest first; the caller has checked the rule is the tenant's. */
    async listExecutions(ruleId: string, window: PageWindow): Promise<readonly RuleExecutionRow[]> {
      return db.any(sql.type(ruleExecutionRow)`
        SELECT ${executionColumns} FROM rule_executions e
        WHERE e.rule_id = ${ruleId} AND ${olderThanCursor(window, 'e')}
        ORDER BY e.created_at DESC, e.id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },
  };
}
