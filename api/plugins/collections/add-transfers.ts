import Joi from 'joi';
import { type AddTransfersInput, addTransfers } from '../../../lib/collections/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { collection, collectionParams, transferIds } from './schemas.ts';

export const addTransfersRoute = defineRoute({
  method: 'POST',
  path: '/v1/collections/{id}/transfers',
  options: {
    id: 'collections.addTransfers',
    description: 'Add transfers to a collection',
    notes:
      "Adds `transfer_ids` in their order: at the end, or with `position` at that index of the resulting order (those already in the collection move there). Without `position`, transfers already in it stay where they are. Another workspace or environment's transfer is 404.",
    tags: ['api', 'collections'],
    plugins: {
      valise: {
        scope: 'collections:write',
        audit: { action: 'collection.add_transfers', resourceType: 'collection' },
      },
    },
    validate: {
      params: collectionParams,
      payload: Joi.object<AddTransfersInput>({
        transfer_ids: transferIds.min(1).required(),
        position: Joi.number().integer().min(0).max(1_000_000),
      }).label('AddCollectionTransfers'),
    },
    response: { schema: collection },
  },
  handler: (request) =>
    addTransfers(request.server.app.services, callerOf(request), request.params.id, request.payload),
});
