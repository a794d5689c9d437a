import { getRule } from '../../../lib/rules/service.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { rule } from './schemas.ts';

export const getRoute = defineRoute({
  method: 'GET',
  path: '/v1/rules/{id}',
  options: {
    id: 'rules.get',
    description: 'Fetch an automation rule',
    notes:
      'Target URLs (`url`, `webhook_url`) are masked (host and a path of `***`) unless the key holds `webhooks:manage`.',
    tags: ['api', 'rules'],
    plugins: { valise: { scope: 'transfers:read' } },
    validate: { params: idParams },
    response: { schema: rule },
  },
  handler: (request) => getRule(request.server.app.services, callerOf(request), request.params.id),
});
