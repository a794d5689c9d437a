import Joi from 'joi';
import { RULE_TRIGGERS } from '../../../lib/events/catalog.ts';
import { actionConfig } from '../../../lib/rules/actions.ts';
import {
  CONDITION_KEYS,
  MAX_DESCRIPTION_LENGTH,
  MAX_MIN_FILES,
  MAX_NAME_LENGTH,
  type TriggerConditions,
} from '../../../lib/rules/service.ts';
import { RULE_ACTION_TYPES, RULE_EXECUTION_STATUSES } from '../../../lib/rules/vocabulary.ts';
import { ENCRYPTION_MODES, TRANSFER_STATUSES } from '../../../lib/vocabulary.ts';
import { id, listEnvelope, text, timestamp } from '../../schemas.ts';

// A rule is validated here, once: each field, the conditions, and
// `action_config` against `action_type` (the configs of lib/rules/actions.ts).
// lib/rules/service.ts adds only what a schema cannot see: the target guard of
// URL actions and, on PATCH, the stored rule the change is merged with.

export const name = text.trim().min(1).max(MAX_NAME_LENGTH);
/** An empty description is stored as null (lib/rules/service.ts). */
export const description = text.trim().max(MAX_DESCRIPTION_LENGTH).allow('', null);
export const triggerEvent = Joi.string().valid(...RULE_TRIGGERS);
export const actionType = Joi.string().valid(...RULE_ACTION_TYPES);

const conditions = Joi.object<TriggerConditions>({
  encryption_mode: Joi.string().valid(...ENCRYPTION_MODES),
  min_files: Joi.number().strict().integer().min(1).max(MAX_MIN_FILES),
  status: Joi.string().valid(...TRANSFER_STATUSES),
  recipient_email: Joi.string()
    .trim()
    .email({ tlds: false })
    .max(320)
    .custom((address: string) => address.toLowerCase()),
  country_code: Joi.string()
    .pattern(/^[A-Za-z]{2}$/, 'two letters (ISO 3166-1 alpha-2)')
    .custom((code: string) => code.toUpperCase()),
}).label('RuleConditions');

/** The spec's rule: anything but an object (a JSON string is not one) means no conditions, null. */
export const triggerConditions = Joi.alternatives()
  // biome-ignore lint/suspicious/noThenProperty: joi's conditional takes `then`.
  .conditional(Joi.object().unknown(true).strict(), { then: conditions, otherwise: Joi.any().custom(() => null) })
  .description(
    `An object with any of ${CONDITION_KEYS.map((k) => `\`${k}\``).join(', ')}; ` +
      'anything other than an object (or no value) means no conditions (null).',
  );

export const ruleFields = {
  name,
  description,
  trigger_event: triggerEvent,
  trigger_conditions: triggerConditions,
  action_type: actionType,
  action_config: actionConfig,
  is_enabled: Joi.boolean(),
};

export const rule = Joi.object({
  id: id.required(),
  object: Joi.string().valid('rule').required(),
  workspace_id: id.required(),
  name: Joi.string().required(),
  description: Joi.string().allow(null).required(),
  trigger_event: Joi.string().required(),
  trigger_conditions: conditions.allow(null).required(),
  action_type: Joi.string().required(),
  action_config: Joi.object()
    .unknown(true)
    .required()
    .description(
      "The action's members. `url` and `webhook_url` are shown in full only to a key holding `webhooks:manage`; " +
        'other readers get the scheme, host and port and a path of `***` (`https://hooks.slack.com/***`).',
    ),
  is_enabled: Joi.boolean().required(),
  trigger_count: Joi.number().integer().required(),
  last_triggered_at: timestamp.allow(null).required(),
  created_at: timestamp.required(),
  updated_at: timestamp.required(),
}).label('Rule');

export const ruleWithSecret = rule
  .keys({
    secret: Joi.string()
      .pattern(/^whsec_/)
      .description(
        'The signing secret of a `webhook` or `trigger_webhook` rule, present only in the response that created it.',
      ),
  })
  .label('RuleWithSecret');

export const ruleList = listEnvelope(rule, 'RuleList');

export const ruleExecution = Joi.object({
  id: id.required(),
  object: Joi.string().valid('rule_execution').required(),
  rule_id: id.required(),
  event_id: Joi.string().required(),
  event_type: Joi.string().required(),
  status: Joi.string()
    .valid(...RULE_EXECUTION_STATUSES)
    .required(),
  error: Joi.string()
    .allow(null, '')
    .required()
    .description('Why it failed; a URL in it is masked as in the rule for a key without `webhooks:manage`.'),
  duration_ms: Joi.number().integer().allow(null).required(),
  attempts: Joi.number().integer().required(),
  created_at: timestamp.required(),
  completed_at: timestamp.allow(null).required(),
}).label('RuleExecution');

export const ruleExecutionList = listEnvelope(ruleExecution, 'RuleExecutionList');

export const deletedRule = Joi.object({
  id: id.required(),
  object: Joi.string().valid('rule').required(),
  deleted: Joi.boolean().valid(true).required(),
}).label('DeletedRule');
