import { deleteCoffre } from '../../../lib/coffres/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { coffreParams, deletedCoffre } from './schemas.ts';

export const removeRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/coffres/{id}',
  options: {
    id: 'coffres.delete',
    description: 'Delete a vault',
    notes:
      'Every item is crypto-shredded at once (its key destroyed; the blobs are removed after), and every ' +
      'invitation link stops working.',
    tags: ['api', 'coffres'],
    plugins: { valise: { scope: 'coffres:manage', audit: { action: 'coffre.delete', resourceType: 'coffre' } } },
    validate: { params: coffreParams },
    response: { schema: deletedCoffre },
  },
  handler: (request) => deleteCoffre(request.server.app.services, callerOf(request), request.params.id),
});
