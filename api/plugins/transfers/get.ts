import { getTransfer } from '../../../lib/transfers/manage.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { transfer } from './schemas.ts';

export const getRoute = defineRoute({
  method: 'GET',
  path: '/v1/transfers/{id}',
  options: {
    id: 'transfers.get',
    description: 'Fetch a transfer with its files',
    tags: ['api', 'transfers'],
    plugins: { valise: { scope: 'transfers:read' } },
    validate: { params: idParams },
    response: { schema: transfer },
  },
  handler: (request) => getTransfer(request.server.app.services, callerOf(request), request.params.id),
});
