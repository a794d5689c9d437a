import { deleteItem } from '../../../lib/coffres/items.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { deletedItem, itemParams } from './schemas.ts';

export const itemsRemoveRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/coffres/{id}/items/{itemId}',
  options: {
    id: 'coffres.deleteItem',
    description: 'Delete a vault item',
    notes: 'Crypto-shredded: its key is destroyed now, its blob removed after. 410 if deleted already.',
    tags: ['api', 'coffres'],
    plugins: {
      valise: {
        scope: 'coffres:write',
        audit: { action: 'coffre.delete_item', resourceType: 'coffre' },
        openapi: { errors: [410] },
      },
    },
    validate: { params: itemParams },
    response: { schema: deletedItem },
  },
  handler: (request) =>
    deleteItem(request.server.app.services, callerOf(request), request.params.id, request.params.itemId),
});
