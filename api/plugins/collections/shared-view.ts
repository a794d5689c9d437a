import { viewSharedCollection } from '../../../lib/collections/shared.ts';
import { defineRoute } from '../../route.ts';
import { shareCodeParams, sharedCollection } from './schemas.ts';

export const sharedViewRoute = defineRoute({
  method: 'GET',
  path: '/v1/shared-collections/{code}',
  options: {
    id: 'collections.getShared',
    auth: false,
    description: 'A shared collection as a visitor of its link sees it',
    notes:
      'Public: the code is the capability. Lists only the transfers that can be downloaded now, each with its `access`: `open` (files listed), `password` (title and files hidden until its password is given to download-links) or `own_link` (end-to-end: only the link its sender gave, which holds the key, can download it). A rotated, disabled or unknown code is 404.',
    tags: ['api', 'collections'],
    validate: { params: shareCodeParams },
    response: { schema: sharedCollection },
  },
  handler: (request) => viewSharedCollection(request.server.app.services, request.params.code),
});
