import Joi from 'joi';
import { listCoffres } from '../../../lib/coffres/service.ts';
import type { PageQuery } from '../../../lib/pagination.ts';
import { defineRoute } from '../../route.ts';
import { pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { coffreList } from './schemas.ts';

export const listRoute = defineRoute({
  method: 'GET',
  path: '/v1/coffres',
  options: {
    id: 'coffres.list',
    description: 'List vaults',
    notes: 'Newest first; deleted vaults are left out, expired ones stay (their access log remains readable).',
    tags: ['api', 'coffres'],
    plugins: { valise: { scope: 'coffres:read' } },
    validate: { query: Joi.object<PageQuery>(pageQuery()) },
    response: { schema: coffreList },
  },
  handler: (request) => listCoffres(request.server.app.services, callerOf(request), request.query),
});
