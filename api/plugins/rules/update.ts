import Joi from 'joi';
import { type RuleInput, updateRule } from '../../../lib/rules/service.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { ruleFields, ruleWithSecret } from './schemas.ts';
import { scopeBeforeBody } from './scope-before-body.ts';

export const updateRoute = defineRoute({
  method: 'PATCH',
  path: '/v1/rules/{id}',
  options: {
    id: 'rules.update',
    description: 'Update an automation rule',
    notes:
      'Any field; `is_enabled: false` disables the rule without deleting it. `action_config`, when sent, replaces ' +
      'the old one; a new `action_type` alone keeps the old members it takes. The result must be a valid rule. ' +
      'Switching a rule without a secret to a webhook action returns its new `secret` once. Changing a rule whose ' +
      'action calls a URL (before or after the change) needs `webhooks:manage` besides `transfers:manage`.',
    tags: ['api', 'rules'],
    plugins: { valise: { scope: 'transfers:manage', audit: { action: 'rule.update', resourceType: 'rule' } } },
    validate: {
      params: idParams,
      payload: Joi.object<Partial<RuleInput>>(ruleFields).min(1).label('UpdateRule'),
      failAction: scopeBeforeBody,
    },
    response: { schema: ruleWithSecret },
  },
  handler: (request) => updateRule(request.server.app.services, callerOf(request), request.params.id, request.payload),
});
