import { disableShareLink } from '../../../lib/collections/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { collection, collectionParams } from './schemas.ts';

export const disableShareLinkRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/collections/{id}/share-link',
  options: {
    id: 'collections.disableShareLink',
    description: "Turn a collection's share link off",
    notes: '`share_url` becomes null and the link is 404 from now on; rotate to get a new one.',
    tags: ['api', 'collections'],
    plugins: {
      valise: {
        scope: 'collections:manage',
        audit: { action: 'collection.disable_share_link', resourceType: 'collection' },
      },
    },
    validate: { params: collectionParams },
    response: { schema: collection },
  },
  handler: (request) => disableShareLink(request.server.app.services, callerOf(request), request.params.id),
});
