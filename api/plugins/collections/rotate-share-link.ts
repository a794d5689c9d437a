import { rotateShareLink } from '../../../lib/collections/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { collection, collectionParams } from './schemas.ts';

export const rotateShareLinkRoute = defineRoute({
  method: 'POST',
  path: '/v1/collections/{id}/rotate-share-link',
  options: {
    id: 'collections.rotateShareLink',
    description: "Rotate a collection's share link",
    notes: 'A new `share_url`; the old link is 404 from now on. Also turns a disabled link back on.',
    tags: ['api', 'collections'],
    plugins: {
      valise: {
        scope: 'collections:manage',
        audit: { action: 'collection.rotate_share_link', resourceType: 'collection' },
      },
    },
    validate: { params: collectionParams },
    response: { schema: collection },
  },
  handler: (request) => rotateShareLink(request.server.app.services, callerOf(request), request.params.id),
});
