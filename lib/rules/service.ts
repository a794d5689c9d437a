import { z } from 'zod';
import { type Caller, tenantOf } from '../api-keys/present.ts';
import { holdsScope } from '../api-keys/scopes.ts';
import { seal, unseal } from '../crypto/secrets.ts';
import { createRuleQueries, type RuleChanges, type RuleExecutionRow, type RuleRow } from '../db/queries/rules.ts';
import { DomainError, notFound } from '../errors.ts';
import { RULE_TRIGGERS } from '../events/catalog.ts';
import type { PageQuery } from '../pagination.ts';
import type { Services } from '../services.ts';
import { generateWebhookSecret } from '../webhooks/signature.ts';
import {
  type ActionType,
  callsUrl,
  carryOverConfig,
  isActionType,
  isPlainObject,
  normaliseActionConfig,
  type TargetOptions,
  URL_ACTION_SCOPE,
  usesSigningSecret,
} from './actions.ts';

// Automation rules (docs/rules.md): a trigger event, optional conditions and
// one action, per workspace and environment. This module validates and
// stores them; the worker evaluates and runs them.

export const MAX_RULES = 100;
export const MAX_NAME_LENGTH = 200;
export const MAX_DESCRIPTION_LENGTH = 500;

export type RuleTrigger = (typeof RULE_TRIGGERS)[number];
const triggers: ReadonlySet<string> = new Set(RULE_TRIGGERS);
export function isRuleTrigger(value: unknown): value is RuleTrigger {
  return typeof value === 'string' && triggers.has(value);
}

const TRANSFER_STATUSES = ['active', 'expired', 'deleted', 'scanning'] as const;
const ENCRYPTION_MODES = ['server', 'e2e'] as const;
export const CONDITION_KEYS = ['encryption_mode', 'min_files', 'status', 'recipient_email', 'country_code'] as const;
/** min_files above this cannot match any transfer. */
export const MAX_MIN_FILES = 1_000_000;

export type TriggerConditions = {
  encryption_mode?: (typeof ENCRYPTION_MODES)[number];
  min_files?: number;
  status?: (typeof TRANSFER_STATUSES)[number];
  recipient_email?: string;
  country_code?: string;
};

export type RuleDefinition = {
  name: string;
  description: string | null;
  trigger_event: RuleTrigger;
  trigger_conditions: TriggerConditions | null;
  action_type: ActionType;
  action_config: Record<string, unknown>;
  is_enabled: boolean;
};

/** A rule as a client sends it (POST body); PATCH sends any subset. */
export type RuleInput = {
  name: string;
  description?: string | null | undefined;
  trigger_event: string;
  trigger_conditions?: unknown;
  action_type: string;
  action_config?: unknown;
  is_enabled?: boolean | undefined;
};

const invalid = (param: string, message: string) => new DomainError('validation_error', message, { param });
const email = z.email().max(320);

// ---- Normalisers, shared with the worker. ----

export function normaliseName(value: unknown): string {
  if (typeof value !== 'string') throw invalid('name', '`name` must be a string.');
  const name = value.trim();
  if (name === '') throw invalid('name', '`name` must not be empty.');
  if (name.length > MAX_NAME_LENGTH) throw invalid('name', `\`name\` must be at most ${MAX_NAME_LENGTH} characters.`);
  if (name.includes('\u0000')) throw invalid('name', '`name` must not contain NUL characters.');
  return name;
}

/** Trimmed; absent, null or empty becomes null. */
export function normaliseDescription(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalid('description', '`description` must be a string or null.');
  const description = value.trim();
  if (description.length > MAX_DESCRIPTION_LENGTH) {
    throw invalid('description', `\`description\` must be at most ${MAX_DESCRIPTION_LENGTH} characters.`);
  }
  if (description.includes('\u0000')) throw invalid('description', '`description` must not contain NUL characters.');
  return description === '' ? null : description;
}

export function checkTrigger(value: unknown): RuleTrigger {
  if (!isRuleTrigger(value)) {
    throw invalid('trigger_event', '`trigger_event` is not a supported trigger. See docs/rules.md for the list.');
  }
  return value;
}

export function checkActionType(value: unknown): ActionType {
  if (!isActionType(value)) {
    throw invalid('action_type', '`action_type` is not a supported action. See docs/rules.md for the list.');
  }
  return value;
}

/**
 * The spec's rule: anything but a plain object is null (no conditions). An
 * object may only hold CONDITION_KEYS, each valid; the result is normalised
 * (`country_code` upper case, `recipient_email` trimmed and lower case).
 */
export function normaliseTriggerConditions(value: unknown): TriggerConditions | null {
  if (!isPlainObject(value)) return null;
  const out: TriggerConditions = {};
  for (const [key, raw] of Object.entries(value)) {
    const param = `trigger_conditions.${key}`;
    switch (key) {
      case 'encryption_mode':
        if (raw !== 'server' && raw !== 'e2e') throw invalid(param, `\`${param}\` must be \`server\` or \`e2e\`.`);
        out.encryption_mode = raw;
        break;
      case 'min_files':
        if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1 || raw > MAX_MIN_FILES) {
          throw invalid(param, `\`${param}\` must be an integer from 1 to ${MAX_MIN_FILES}.`);
        }
        out.min_files = raw;
        break;
      case 'status': {
        const status = TRANSFER_STATUSES.find((s) => s === raw);
        if (!status) throw invalid(param, `\`${param}\` must be one of ${TRANSFER_STATUSES.join(', ')}.`);
        out.status = status;
        break;
      }
      case 'recipient_email': {
        const parsed = typeof raw === 'string' ? email.safeParse(raw.trim()) : null;
        if (!parsed?.success) throw invalid(param, `\`${param}\` must be an e-mail address.`);
        out.recipient_email = parsed.data.toLowerCase();
        break;
      }
      case 'country_code':
        if (typeof raw !== 'string' || !/^[A-Za-z]{2}$/.test(raw)) {
          throw invalid(param, `\`${param}\` must be a two-letter country code (ISO 3166-1 alpha-2).`);
        }
        out.country_code = raw.toUpperCase();
        break;
      default:
        throw invalid(
          param,
          `\`${param}\` is not a known condition; conditions are ${CONDITION_KEYS.map((k) => `\`${k}\``).join(', ')}.`,
        );
    }
  }
  return out;
}

/**
 * Validates a whole rule and returns it normalised, or throws 400
 * validation_error naming the field at fault. The worker may call it on a
 * stored rule to re-check it (for instance against a stricter URL policy).
 */
export function validateRuleDefinition(input: RuleInput, options: TargetOptions): RuleDefinition {
  const name = normaliseName(input.name);
  const trigger = checkTrigger(input.trigger_event);
  const actionType = checkActionType(input.action_type);
  const actionConfig = normaliseActionConfig(actionType, input.action_config, options);
  if (input.is_enabled !== undefined && typeof input.is_enabled !== 'boolean') {
    throw invalid('is_enabled', '`is_enabled` must be a boolean.');
  }
  return {
    name,
    description: normaliseDescription(input.description),
    trigger_event: trigger,
    trigger_conditions: normaliseTriggerConditions(input.trigger_conditions),
    action_type: actionType,
    action_config: actionConfig,
    is_enabled: input.is_enabled ?? true,
  };
}

const targetOptions = (services: Services): TargetOptions => ({
  allowPrivateTargets: services.config.webhooks.allowPrivateTargets,
});

/**
 * A rule whose action calls a URL does what a webhook does: the caller needs
 * `webhooks:manage` besides the route's `transfers:manage` to create, change or
 * delete it (docs/rules.md, "Scopes of actions"). Checked before the body is.
 */
function requireUrlActionScope(caller: Caller): void {
  if (holdsScope(caller.keyType, caller.scopes, URL_ACTION_SCOPE)) return;
  throw new DomainError(
    'scope_missing',
    `This key lacks the \`${URL_ACTION_SCOPE}\` scope, which rules whose action calls a URL ` +
      '(`webhook`, `trigger_webhook`, `slack_notify`) need besides `transfers:manage`.',
    { details: { required_scope: URL_ACTION_SCOPE } },
  );
}

// ---- Presentation. ----

export function presentRule(row: RuleRow) {
  return {
    id: row.id,
    object: 'rule' as const,
    workspace_id: row.workspace_id,
    name: row.name,
    description: row.description,
    trigger_event: row.trigger_event,
    trigger_conditions: row.trigger_conditions,
    action_type: row.action_type,
    action_config: row.action_config,
    is_enabled: row.is_enabled,
    trigger_count: row.trigger_count,
    last_triggered_at: row.last_triggered_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function presentExecution(row: RuleExecutionRow) {
  return {
    id: row.id,
    object: 'rule_execution' as const,
    rule_id: row.rule_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    error: row.error,
    duration_ms: row.duration_ms,
    attempts: row.attempts,
    created_at: row.created_at,
    completed_at: row.completed_at,
  };
}

/** The rule's `whsec_` signing secret in clear (webhook actions), for the worker to sign calls with. */
export function ruleSigningSecret(services: Pick<Services, 'keys'>, row: Pick<RuleRow, 'secret_sealed'>) {
  return row.secret_sealed === null ? null : unseal(services.keys.seal, row.secret_sealed);
}

// ---- Domain functions behind the routes. ----

export async function createRule(services: Services, caller: Caller, input: RuleInput) {
  if (callsUrl(input.action_type)) requireUrlActionScope(caller);
  const rule = validateRuleDefinition(input, targetOptions(services));
  const secret = usesSigningSecret(rule.action_type) ? generateWebhookSecret() : null;
  const row = await services.db.transaction(async (tx) => {
    const rules = createRuleQueries(tx);
    await rules.lockTenant(tenantOf(caller));
    if ((await rules.count(tenantOf(caller))) >= MAX_RULES) {
      throw new DomainError('validation_error', `A workspace may have at most ${MAX_RULES} rules per environment.`);
    }
    return rules.insert(tenantOf(caller), {
      name: rule.name,
      description: rule.description,
      triggerEvent: rule.trigger_event,
      triggerConditions: rule.trigger_conditions,
      actionType: rule.action_type,
      actionConfig: rule.action_config,
      secretSealed: secret === null ? null : seal(services.keys.seal, secret),
      isEnabled: rule.is_enabled,
    });
  });
  return secret === null ? presentRule(row) : { ...presentRule(row), secret };
}

export type RuleListQuery = PageQuery & { trigger_event?: string | undefined; is_enabled?: boolean | undefined };

export async function listRules(services: Services, caller: Caller, query: RuleListQuery) {
  const filters = { trigger_event: query.trigger_event, is_enabled: query.is_enabled };
  const window = services.paginator.open('rules', filters, query);
  const rows = await createRuleQueries(services.db).list(
    tenantOf(caller),
    { triggerEvent: query.trigger_event, isEnabled: query.is_enabled },
    window,
  );
  return services.paginator.close('rules', filters, query, rows, presentRule);
}

export async function getRule(services: Services, caller: Caller, id: string) {
  const row = await createRuleQueries(services.db).find(tenantOf(caller), id);
  if (!row) throw notFound('rule');
  return presentRule(row);
}

/**
 * Changes any field; the result must still be a valid rule. `action_config`,
 * when sent, replaces the old one. A new `action_type` without `action_config`
 * keeps the members of the old config the new action takes. Switching to a
 * webhook action on a rule without a secret creates one, returned once here.
 */
export async function updateRule(services: Services, caller: Caller, id: string, input: Partial<RuleInput>) {
  return services.db.transaction(async (tx) => {
    const rules = createRuleQueries(tx);
    const row = await rules.find(tenantOf(caller), id, { forUpdate: true });
    if (!row) throw notFound('rule');
    // Any change to a rule that calls a URL, or that would make it call one.
    const nextActionType = isActionType(input.action_type) ? input.action_type : row.action_type;
    if (callsUrl(row.action_type) || callsUrl(nextActionType)) requireUrlActionScope(caller);
    const changes: RuleChanges = {};
    if (input.name !== undefined) changes.name = normaliseName(input.name);
    if (input.description !== undefined) changes.description = normaliseDescription(input.description);
    if (input.trigger_event !== undefined) changes.triggerEvent = checkTrigger(input.trigger_event);
    if (input.trigger_conditions !== undefined) {
      changes.triggerConditions = normaliseTriggerConditions(input.trigger_conditions);
    }
    if (input.is_enabled !== undefined) changes.isEnabled = input.is_enabled;
    let secret: string | null = null;
    if (input.action_type !== undefined || input.action_config !== undefined) {
      const actionType =
        input.action_type === undefined ? checkActionType(row.action_type) : checkActionType(input.action_type);
      const config =
        input.action_config !== undefined
          ? input.action_config
          : actionType === row.action_type
            ? row.action_config
            : carryOverConfig(actionType, row.action_config);
      changes.actionType = actionType;
      changes.actionConfig = normaliseActionConfig(actionType, config, targetOptions(services));
      if (usesSigningSecret(actionType) && row.secret_sealed === null) {
        secret = generateWebhookSecret();
        changes.secretSealed = seal(services.keys.seal, secret);
      }
    }
    const updated = await rules.update(row.id, changes);
    if (!updated) throw notFound('rule');
    return secret === null ? presentRule(updated) : { ...presentRule(updated), secret };
  });
}

export async function removeRule(services: Services, caller: Caller, id: string) {
  return services.db.transaction(async (tx) => {
    const rules = createRuleQueries(tx);
    const row = await rules.find(tenantOf(caller), id, { forUpdate: true });
    if (!row) throw notFound('rule');
    if (callsUrl(row.action_type)) requireUrlActionScope(caller);
    if (!(await rules.remove(tenantOf(caller), id))) throw notFound('rule');
    return { id, object: 'rule' as const, deleted: true as const };
  });
}

export async function listRuleExecutions(services: Services, caller: Caller, id: string, query: PageQuery) {
  const rules = createRuleQueries(services.db);
  if (!(await rules.find(tenantOf(caller), id))) throw notFound('rule');
  const filters = { rule_id: id };
  const window = services.paginator.open('rule_executions', filters, query);
  const rows = await rules.listExecutions(id, window);
  return services.paginator.close('rule_executions', filters, query, rows, presentExecution);
}
