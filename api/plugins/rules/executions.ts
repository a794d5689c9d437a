import Joi from 'joi';
import type { PageQuery } from '../../../lib/pagination.ts';
import { listRuleExecutions } from '../../../lib/rules/service.ts';
import { defineRoute } from '../../route.ts';
import { idParams, pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { ruleExecutionList } from './schemas.ts';

export const executionsRoute = defineRoute({
  method: 'GET',
  path: '/v1/rules/{id}/executions',
  options: {
    id: 'rules.executions',
    description: "List a rule's executions",
    notes:
      'Newest first: one per event that matched the rule, with its outcome. A URL in `error` is masked unless the ' +
      'key holds `webhooks:manage`.',
    tags: ['api', 'rules'],
    plugins: { valise: { scope: 'transfers:read' } },
    validate: { params: idParams, query: Joi.object<PageQuery>(pageQuery()) },
    response: { schema: ruleExecutionList },
  },
  handler: (request) =>
    listRuleExecutions(request.server.app.services, callerOf(request), request.params.id, request.query),
});
