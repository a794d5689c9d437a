import Joi from 'joi';
import { removeTransfer } from '../../../lib/collections/service.ts';
import { defineRoute } from '../../route.ts';
import { id } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { collection } from './schemas.ts';

export const removeTransferRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/collections/{id}/transfers/{transferId}',
  options: {
    id: 'collections.removeTransfer',
    description: 'Take a transfer out of a collection',
    notes: 'The transfer itself is not touched; the others close the gap. 404 when it is not in the collection.',
    tags: ['api', 'collections'],
    plugins: {
      valise: {
        scope: 'collections:write',
        audit: { action: 'collection.remove_transfer', resourceType: 'collection' },
      },
    },
    validate: {
      params: Joi.object<{ id: string; transferId: string }>({ id: id.required(), transferId: id.required() }),
    },
    response: { schema: collection },
  },
  handler: (request) =>
    removeTransfer(request.server.app.services, callerOf(request), request.params.id, request.params.transferId),
});
