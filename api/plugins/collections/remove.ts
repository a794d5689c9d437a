import { deleteCollection } from '../../../lib/collections/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { collectionParams, deletedCollection } from './schemas.ts';

export const removeRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/collections/{id}',
  options: {
    id: 'collections.delete',
    description: 'Delete a collection',
    notes: 'Its share link stops working at once. The transfers are not touched.',
    tags: ['api', 'collections'],
    plugins: {
      valise: { scope: 'collections:manage', audit: { action: 'collection.delete', resourceType: 'collection' } },
    },
    validate: { params: collectionParams },
    response: { schema: deletedCollection },
  },
  handler: (request) => deleteCollection(request.server.app.services, callerOf(request), request.params.id),
});
