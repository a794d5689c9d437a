import Joi from 'joi';
import { listCollections } from '../../../lib/collections/service.ts';
import type { PageQuery } from '../../../lib/pagination.ts';
import { defineRoute } from '../../route.ts';
import { pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { collectionList } from './schemas.ts';

export const listRoute = defineRoute({
  method: 'GET',
  path: '/v1/collections',
  options: {
    id: 'collections.list',
    description: 'List collections',
    notes: 'Newest first. Items carry `transfer_count`; `GET /v1/collections/{id}` has the transfers.',
    tags: ['api', 'collections'],
    plugins: { valise: { scope: 'collections:read' } },
    validate: { query: Joi.object<PageQuery>(pageQuery()) },
    response: { schema: collectionList },
  },
  handler: (request) => listCollections(request.server.app.services, callerOf(request), request.query),
});
