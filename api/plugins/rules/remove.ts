import { removeRule } from '../../../lib/rules/service.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { deletedRule } from './schemas.ts';

export const removeRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/rules/{id}',
  options: {
    id: 'rules.delete',
    description: 'Delete an automation rule',
    notes:
      'Permanent; its execution history goes with it. A second DELETE is 404. Deleting a rule whose action calls ' +
      'a URL needs `webhooks:manage` besides `transfers:manage`.',
    tags: ['api', 'rules'],
    plugins: { valise: { scope: 'transfers:manage', audit: { action: 'rule.delete', resourceType: 'rule' } } },
    validate: { params: idParams },
    response: { schema: deletedRule },
  },
  handler: (request) => removeRule(request.server.app.services, callerOf(request), request.params.id),
});
