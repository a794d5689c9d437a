import Joi from 'joi';
import { createRule, type RuleInput } from '../../../lib/rules/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { ruleFields, ruleWithSecret } from './schemas.ts';
import { scopeBeforeBody } from './scope-before-body.ts';

export const createRoute = defineRoute({
  method: 'POST',
  path: '/v1/rules',
  options: {
    id: 'rules.create',
    description: 'Create an automation rule',
    notes:
      'Runs `action_type` with `action_config` when `trigger_event` occurs and `trigger_conditions` match. ' +
      '`webhook` and `trigger_webhook` rules get a signing secret (`secret`, `whsec_…`), returned once. ' +
      'At most 100 rules per environment. `webhook`, `trigger_webhook` and `slack_notify` rules call a URL: they ' +
      'need `webhooks:manage` besides `transfers:manage`. Mail actions take no address.',
    tags: ['api', 'rules'],
    plugins: { valise: { scope: 'transfers:manage', audit: { action: 'rule.create', resourceType: 'rule' } } },
    validate: {
      payload: Joi.object<RuleInput>({
        ...ruleFields,
        name: ruleFields.name.required(),
        trigger_event: ruleFields.trigger_event.required(),
        action_type: ruleFields.action_type.required(),
      }).label('CreateRule'),
      failAction: scopeBeforeBody,
    },
    response: { status: { 201: ruleWithSecret } },
  },
  handler: async (request, h) =>
    h.response(await createRule(request.server.app.services, callerOf(request), request.payload)).code(201),
});
