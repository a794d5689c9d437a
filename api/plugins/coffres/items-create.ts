import { createItem } from '../../../lib/coffres/items.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { coffreParams, createdItem, newItem } from './schemas.ts';

export const itemsCreateRoute = defineRoute({
  method: 'POST',
  path: '/v1/coffres/{id}/items',
  options: {
    id: 'coffres.createItem',
    description: 'Add an item to a vault',
    notes:
      'Declares one file (`name`, exact `size`, `mime_type`) and answers its `upload_url`: upload exactly as for ' +
      'transfer files (`PUT`, resumable with `Content-Range`, `HEAD` for the offset). The bytes are sealed at rest ' +
      '(AES-256-GCM) on the way in, then scanned; the item is `available` once clean.',
    tags: ['api', 'coffres'],
    plugins: {
      valise: {
        scope: 'coffres:write',
        audit: { action: 'coffre.create_item', resourceType: 'coffre' },
        openapi: { errors: [410] },
      },
    },
    validate: { params: coffreParams, payload: newItem.label('CreateCoffreItem') },
    response: { status: { 201: createdItem } },
  },
  handler: async (request, h) =>
    h
      .response(await createItem(request.server.app.services, callerOf(request), request.params.id, request.payload))
      .code(201),
});
