import Joi from 'joi';
import { listAccessLog } from '../../../lib/coffres/service.ts';
import type { PageQuery } from '../../../lib/pagination.ts';
import { defineRoute } from '../../route.ts';
import { pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { accessLog, coffreParams } from './schemas.ts';

export const accessLogRoute = defineRoute({
  method: 'GET',
  path: '/v1/coffres/{id}/access-log',
  options: {
    id: 'coffres.accessLog',
    description: "A vault's access log",
    notes:
      'Newest first: who (a member by e-mail address, or an API key by id), what (`opened`, `listed`, ' +
      '`downloaded` an item, `uploaded` an item), when and from which address.',
    tags: ['api', 'coffres'],
    plugins: { valise: { scope: 'coffres:read' } },
    validate: { params: coffreParams, query: Joi.object<PageQuery>(pageQuery()) },
    response: { schema: accessLog },
  },
  handler: (request) => listAccessLog(request.server.app.services, callerOf(request), request.params.id, request.query),
});
