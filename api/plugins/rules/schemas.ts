import Joi from 'joi';
import { RULE_TRIGGERS } from '../../../lib/events/catalog.ts';
import { CONDITION_KEYS, MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH } from '../../../lib/rules/service.ts';
import {
  ENCRYPTION_MODES,
  RULE_ACTION_TYPES,
  RULE_EXECUTION_STATUSES,
  TRANSFER_STATUSES,
} from '../../../lib/vocabulary.ts';
import { id, listEnvelope, text, timestamp } from '../../schemas.ts';

// Joi checks the shape of a rule at the edge; lib/rules/service.ts checks
// what depends on other fields (action_config against action_type) and the
// trigger conditions, which the spec turns into null when not an object.

export const name = text.trim().min(1).max(MAX_NAME_LENGTH);
export const description = text.trim().max(MAX_DESCRIPTION_LENGTH).allow('', null);
export const triggerEvent = Joi.string().valid(...RULE_TRIGGERS);
export const actionType = Joi.string().valid(...RULE_ACTION_TYPES);
export const actionConfig = Joi.object()
  .unknown(true)
  .description(
    'Members depend on `action_type`: `url` (webhook, trigger_webhook), `webhook_url` (slack_notify), ' +
      '`subject`/`body` (email_*), `tag` (tag_transfer, untag_transfer), `hours`/`days` (extend_expiry), ' +
      'none (archive_transfer). Any other member is refused. Default `{}`.',
  );
export const triggerConditions = Joi.any().description(
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

const conditions = Joi.object({
  encryption_mode: Joi.string().valid(...ENCRYPTION_MODES),
  min_files: Joi.number().integer().min(1),
  status: Joi.string().valid(...TRANSFER_STATUSES),
  recipient_email: Joi.string(),
  country_code: Joi.string().length(2),
}).label('RuleConditions');

export const rule = Joi.object({
  id: id.required(),
  object: Joi.string().valid('rule').required(),
  workspace_id: id.required(),
  name: Joi.string().required(),
  description: Joi.string().allow(null).required(),
  trigger_event: Joi.string().required(),
  trigger_conditions: conditions.allow(null).required(),
  action_type: Joi.string().required(),
  action_config: Joi.object().unknown(true).required(),
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
  error: Joi.string().allow(null, '').required(),
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
