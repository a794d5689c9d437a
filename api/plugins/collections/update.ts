import Joi from 'joi';
import { type UpdateCollectionInput, updateCollection } from '../../../lib/collections/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { collection, collectionParams, description, title } from './schemas.ts';

export const updateRoute = defineRoute({
  method: 'PATCH',
  path: '/v1/collections/{id}',
  options: {
    id: 'collections.update',
    description: 'Change a collection',
    notes: '`title` and/or `description` (null or empty clears it).',
    tags: ['api', 'collections'],
    plugins: {
      valise: { scope: 'collections:write', audit: { action: 'collection.update', resourceType: 'collection' } },
    },
    validate: {
      params: collectionParams,
      payload: Joi.object<UpdateCollectionInput>({ title, description }).min(1).label('UpdateCollection'),
    },
    response: { schema: collection },
  },
  handler: (request) =>
    updateCollection(request.server.app.services, callerOf(request), request.params.id, request.payload),
});
