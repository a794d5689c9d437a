import Joi from 'joi';
import { listRules, type RuleListQuery } from '../../../lib/rules/service.ts';
import { defineRoute } from '../../route.ts';
import { pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { ruleList, triggerEvent } from './schemas.ts';

export const listRoute = defineRoute({
  method: 'GET',
  path: '/v1/rules',
  options: {
    id: 'rules.list',
    description: 'List automation rules',
    notes:
      'Newest first. Filters: `trigger_event`, `is_enabled`. Target URLs (`url`, `webhook_url`) are masked ' +
      '(host and a path of `***`) unless the key holds `webhooks:manage`.',
    tags: ['api', 'rules'],
    plugins: { valise: { scope: 'transfers:read' } },
    validate: {
      query: Joi.object<RuleListQuery>({ ...pageQuery(), trigger_event: triggerEvent, is_enabled: Joi.boolean() }),
    },
    response: { schema: ruleList },
  },
  handler: (request) => listRules(request.server.app.services, callerOf(request), request.query),
});
