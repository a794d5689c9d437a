import { getCollection } from '../../../lib/collections/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { collection, collectionParams } from './schemas.ts';

export const getRoute = defineRoute({
  method: 'GET',
  path: '/v1/collections/{id}',
  options: {
    id: 'collections.get',
    description: 'Fetch a collection with its transfers',
    notes: 'Its transfers in order, whatever their state (the public view shows only those downloadable now).',
    tags: ['api', 'collections'],
    plugins: { valise: { scope: 'collections:read' } },
    validate: { params: collectionParams },
    response: { schema: collection },
  },
  handler: (request) => getCollection(request.server.app.services, callerOf(request), request.params.id),
});
