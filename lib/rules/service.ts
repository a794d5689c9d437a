import { holdsScope } from '../api-keys/scopes.ts';
import { seal, unseal } from '../crypto/secrets.ts';
import { createRuleQueries, type RuleChanges, type RuleExecutionRow, type RuleRow } from '../db/queries/rules.ts';
import { DomainError, notFound } from '../errors.ts';
import type { RULE_TRIGGERS } from '../events/catalog.ts';
import type { TargetPolicy } from '../net/ssrf.ts';
import type { PageQuery } from '../pagination.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';
import { type EncryptionMode, isOneOf, type TransferStatus } from '../vocabulary.ts';
import { generateWebhookSecret } from '../webhooks/signature.ts';
import {
  callsUrl,
  carryOverConfig,
  checkActionConfig,
  checkTargets,
  isActionType,
  maskTargetUrl,
  maskUrlsIn,
  TARGET_MEMBERS,
  URL_ACTION_SCOPE,
  usesSigningSecret,
} from './actions.ts';
import { RULE_ACTION_TYPES, type RuleActionType } from './vocabulary.ts';

// Automation rules (docs/rules.md): a trigger event, optional conditions and
// one action, per workspace and environment. The routes' joi schemas
// (api/plugins/rules/schemas.ts, with the action configs of ./actions.ts)
// validate a rule; this module adds what they cannot see (the target guard,
// the stored rule a PATCH is merged with), stores it and seals its secret; the
// worker evaluates and runs rules.

export const MAX_RULES = 100;
export const MAX_NAME_LENGTH = 200;
export const MAX_DESCRIPTION_LENGTH = 500;

export type RuleTrigger = (typeof RULE_TRIGGERS)[number];

/** The condition keys (docs/rules.md, "Conditions"). */
export const CONDITION_KEYS = ['encryption_mode', 'min_files', 'status', 'recipient_email', 'country_code'] as const;
/** min_files above this cannot match any transfer. */
export const MAX_MIN_FILES = 1_000_000;

export type TriggerConditions = {
  encryption_mode?: EncryptionMode;
  min_files?: number;
  status?: TransferStatus;
  /** Lower case. */
  recipient_email?: string;
  /** Upper case. */
  country_code?: string;
};

/** A rule as the routes' schemas let it through (trimmed, normalised); PATCH sends any subset. */
export type RuleInput = {
  name: string;
  description?: string | null | undefined;
  trigger_event: RuleTrigger;
  /** null when the client sent anything but an object (the spec's rule). */
  trigger_conditions?: TriggerConditions | null | undefined;
  action_type: RuleActionType;
  /** Checked with `action_type` by the route; absent means `{}`. */
  action_config?: Record<string, unknown> | undefined;
  is_enabled?: boolean | undefined;
};

/** An empty description is none. */
const descriptionOf = (description: string | null | undefined) => description || null;

/** A stored rule's action (written by the API, so one it knows). */
function storedActionType(row: RuleRow): RuleActionType {
  if (isActionType(row.action_type)) return row.action_type;
  throw new DomainError(
    'validation_error',
    '`action_type` is not a supported action. See docs/rules.md for the list.',
    {
      param: 'action_type',
    },
  );
}

const targetPolicy = (services: Services): TargetPolicy => ({
  allowPrivate: services.config.webhooks.allowPrivateTargets,
});

/**
 * The scope a rule write needs besides the route's, checked before its body is
 * (docs/rules.md, "Scopes of actions"): a rule that calls a URL, before or
 * after the change, needs webhooks:manage. `ruleId` is null on create;
 * `actionType` is the body's, unvalidated.
 */
export async function requireScopeOfRuleWrite(
  services: Services,
  caller: Caller,
  ruleId: string | null,
  actionType: unknown,
): Promise<void> {
  if (isOneOf(RULE_ACTION_TYPES, actionType) && callsUrl(actionType)) return requireUrlActionScope(caller);
  if (ruleId === null) return;
  const row = await createRuleQueries(services.db).find(tenantOf(caller), ruleId);
  if (row && callsUrl(row.action_type)) requireUrlActionScope(caller);
}

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

/**
 * Whether the caller reads target URLs in full: they are credentials (a Slack
 * webhook URL posts to the channel), so only a key that may manage webhooks
 * sees them; any other reader sees the host and a masked path (docs/rules.md,
 * "Reading target URLs").
 */
const seesTargets = (caller: Caller) => holdsScope(caller.keyType, caller.scopes, URL_ACTION_SCOPE);

function presentConfig(row: RuleRow, full: boolean): Record<string, unknown> {
  if (full || !callsUrl(row.action_type)) return row.action_config;
  const config = { ...row.action_config };
  for (const member of TARGET_MEMBERS) {
    const value = config[member];
    if (typeof value === 'string') config[member] = maskTargetUrl(value);
  }
  return config;
}

export function presentRule(row: RuleRow, caller: Caller) {
  return {
    id: row.id,
    object: 'rule' as const,
    workspace_id: row.workspace_id,
    name: row.name,
    description: row.description,
    trigger_event: row.trigger_event,
    trigger_conditions: row.trigger_conditions,
    action_type: row.action_type,
    action_config: presentConfig(row, seesTargets(caller)),
    is_enabled: row.is_enabled,
    trigger_count: row.trigger_count,
    last_triggered_at: row.last_triggered_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** An execution's error names the URL a call went to (activities/rules.ts): masked as in the rule. */
export function presentExecution(row: RuleExecutionRow, caller: Caller) {
  return {
    id: row.id,
    object: 'rule_execution' as const,
    rule_id: row.rule_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    error: row.error === null || seesTargets(caller) ? row.error : maskUrlsIn(row.error),
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
  const actionConfig = checkTargets(
    input.action_type,
    input.action_config ?? checkActionConfig(input.action_type, {}),
    targetPolicy(services),
  );
  const secret = usesSigningSecret(input.action_type) ? generateWebhookSecret() : null;
  const row = await services.db.transaction(async (tx) => {
    const rules = createRuleQueries(tx);
    await rules.lockTenant(tenantOf(caller));
    if ((await rules.count(tenantOf(caller))) >= MAX_RULES) {
      throw new DomainError('validation_error', `A workspace may have at most ${MAX_RULES} rules per environment.`);
    }
    return rules.insert(tenantOf(caller), {
      name: input.name,
      description: descriptionOf(input.description),
      triggerEvent: input.trigger_event,
      triggerConditions: input.trigger_conditions ?? null,
      actionType: input.action_type,
      actionConfig,
      secretSealed: secret === null ? null : seal(services.keys.seal, secret),
      isEnabled: input.is_enabled ?? true,
    });
  });
  return secret === null ? presentRule(row, caller) : { ...presentRule(row, caller), secret };
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
  return services.paginator.close('rules', filters, query, rows, (row) => presentRule(row, caller));
}

export async function getRule(services: Services, caller: Caller, id: string) {
  const row = await createRuleQueries(services.db).find(tenantOf(caller), id);
  if (!row) throw notFound('rule');
  return presentRule(row, caller);
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
    if (callsUrl(row.action_type) || (input.action_type !== undefined && callsUrl(input.action_type))) {
      requireUrlActionScope(caller);
    }
    const changes: RuleChanges = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.description !== undefined) changes.description = descriptionOf(input.description);
    if (input.trigger_event !== undefined) changes.triggerEvent = input.trigger_event;
    if (input.trigger_conditions !== undefined) changes.triggerConditions = input.trigger_conditions;
    if (input.is_enabled !== undefined) changes.isEnabled = input.is_enabled;
    let secret: string | null = null;
    if (input.action_type !== undefined || input.action_config !== undefined) {
      const actionType = input.action_type ?? storedActionType(row);
      // The route checked a config sent with its action_type; any other is checked here, whole.
      const config =
        input.action_type !== undefined && input.action_config !== undefined
          ? input.action_config
          : checkActionConfig(
              actionType,
              input.action_config ??
                (actionType === row.action_type ? row.action_config : carryOverConfig(actionType, row.action_config)),
            );
      changes.actionType = actionType;
      changes.actionConfig = checkTargets(actionType, config, targetPolicy(services));
      if (usesSigningSecret(actionType) && row.secret_sealed === null) {
        secret = generateWebhookSecret();
        changes.secretSealed = seal(services.keys.seal, secret);
      }
    }
    const updated = await rules.update(row.id, changes);
    if (!updated) throw notFound('rule');
    return secret === null ? presentRule(updated, caller) : { ...presentRule(updated, caller), secret };
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
  return services.paginator.close('rule_executions', filters, query, rows, (row) => presentExecution(row, caller));
}
