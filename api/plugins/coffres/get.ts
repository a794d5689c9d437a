import { getCoffre } from '../../../lib/coffres/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { coffre, coffreParams } from './schemas.ts';

export const getRoute = defineRoute({
  method: 'GET',
  path: '/v1/coffres/{id}',
  options: {
    id: 'coffres.get',
    description: 'Get a vault',
    notes: 'With how many members and items it has; the members and items have their own lists.',
    tags: ['api', 'coffres'],
    plugins: { valise: { scope: 'coffres:read' } },
    validate: { params: coffreParams },
    response: { schema: coffre },
  },
  handler: (request) => getCoffre(request.server.app.services, callerOf(request), request.params.id),
});
