import Joi from 'joi';
import { type CreateCollectionInput, createCollection } from '../../../lib/collections/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { collection, description, title, transferIds } from './schemas.ts';

export const createRoute = defineRoute({
  method: 'POST',
  path: '/v1/collections',
  options: {
    id: 'collections.create',
    description: 'Create a collection',
    notes:
      'A `title`, an optional `description` and optional `transfer_ids` (transfers of this workspace and environment, in the order wanted; any other id is 404). The answer carries its `share_url`. At most 500 transfers per collection.',
    tags: ['api', 'collections'],
    plugins: {
      valise: {
        scope: 'collections:write',
        audit: { action: 'collection.create', resourceType: 'collection' },
        // A transfer id out of the key's reach (docs/collections.md).
        openapi: { errors: [404] },
      },
    },
    validate: {
      payload: Joi.object<CreateCollectionInput>({
        title: title.required(),
        description,
        transfer_ids: transferIds,
      }).label('CreateCollection'),
    },
    response: { status: { 201: collection } },
  },
  handler: async (request, h) =>
    h.response(await createCollection(request.server.app.services, callerOf(request), request.payload)).code(201),
});
