import Joi from 'joi';
import { listTransfers, type TransferListQuery } from '../../../lib/transfers/manage.ts';
import { defineRoute } from '../../route.ts';
import { pageQuery, text } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { transferList, transferStatus } from './schemas.ts';

export const listRoute = defineRoute({
  method: 'GET',
  path: '/v1/transfers',
  options: {
    id: 'transfers.list',
    description: 'List transfers',
    notes:
      'Newest first. `search` matches the title, short code or recipient; `tag` keeps transfers carrying that tag. ' +
      'Archived transfers are listed only with `archived=true`.',
    tags: ['api', 'transfers'],
    plugins: { valise: { scope: 'transfers:read' } },
    validate: {
      query: Joi.object<TransferListQuery>({
        ...pageQuery(),
        status: transferStatus,
        search: text.max(200),
        tag: text.trim().min(1).max(64),
        archived: Joi.boolean().default(false),
      }),
    },
    response: { schema: transferList },
  },
  handler: (request) => listTransfers(request.server.app.services, callerOf(request), request.query),
});
