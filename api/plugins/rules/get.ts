import type { ServerRoute } from '@hapi/hapi';
import { getRule } from '../../../lib/rules/service.ts';
import { idParams } from '../../schemas.ts';
import { callerOf, idParam } from '../../types.ts';
import { rule } from './schemas.ts';

export const getRoute: ServerRoute = {
  method: 'GET',
  path: '/v1/rules/{id}',
  options: {
    id: 'rules.get',
    description: 'Fetch an automation rule',
    tags: ['api', 'rules'],
    plugins: { valise: { scope: 'transfers:read' } },
    validate: { params: idParams },
    response: { schema: rule },
  },
  handler: (request) => getRule(request.server.app.services, callerOf(request), idParam(request)),
};
