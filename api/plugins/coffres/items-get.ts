import { getItem } from '../../../lib/coffres/items.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { item, itemParams } from './schemas.ts';

export const itemsGetRoute = defineRoute({
  method: 'GET',
  path: '/v1/coffres/{id}/items/{itemId}',
  options: {
    id: 'coffres.getItem',
    description: 'Get a vault item',
    notes:
      'An `available` item carries a `download_url`, fresh on each call and valid 300 s, that streams the decrypted ' +
      'file (Range supported); downloads through it are logged as this API key\u2019s. 410 once deleted or rejected.',
    tags: ['api', 'coffres'],
    plugins: { valise: { scope: 'coffres:read', openapi: { errors: [410] } } },
    validate: { params: itemParams },
    response: { schema: item },
  },
  handler: (request) =>
    getItem(request.server.app.services, callerOf(request), request.params.id, request.params.itemId),
});
