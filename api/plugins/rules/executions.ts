import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { listRuleExecutions } from '../../../lib/rules/service.ts';
import { idParams, pageQuery } from '../../schemas.ts';
import { callerOf, idParam } from '../../types.ts';
import { ruleExecutionList } from './schemas.ts';

export const executionsRoute: ServerRoute = {
  method: 'GET',
  path: '/v1/rules/{id}/executions',
  options: {
    id: 'rules.executions',
    description: "List a rule's executions",
    notes: 'Newest first: one per event that matched the rule, with its outcome.',
    tags: ['api', 'rules'],
    plugins: { valise: { scope: 'transfers:read' } },
    validate: { params: idParams, query: Joi.object(pageQuery()) },
    response: { schema: ruleExecutionList },
  },
  handler: (request) =>
    listRuleExecutions(request.server.app.services, callerOf(request), idParam(request), request.query as never),
};
