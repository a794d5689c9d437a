import Joi from 'joi';
import { listItems } from '../../../lib/coffres/items.ts';
import type { PageQuery } from '../../../lib/pagination.ts';
import { defineRoute } from '../../route.ts';
import { pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { coffreParams, itemList } from './schemas.ts';

export const itemsListRoute = defineRoute({
  method: 'GET',
  path: '/v1/coffres/{id}/items',
  options: {
    id: 'coffres.listItems',
    description: "List a vault's items",
    notes:
      'Newest first: items being uploaded or scanned, and available ones. `GET …/items/{itemId}` has the download URL.',
    tags: ['api', 'coffres'],
    plugins: { valise: { scope: 'coffres:read' } },
    validate: { params: coffreParams, query: Joi.object<PageQuery>(pageQuery()) },
    response: { schema: itemList },
  },
  handler: (request) => listItems(request.server.app.services, callerOf(request), request.params.id, request.query),
});
