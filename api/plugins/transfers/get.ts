import type { ServerRoute } from '@hapi/hapi';
import { getTransfer } from '../../../lib/transfers/manage.ts';
import { idParams } from '../../schemas.ts';
import { callerOf, idParam } from '../../types.ts';
import { transfer } from './schemas.ts';

export const getRoute: ServerRoute = {
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
  handler: (request) => getTransfer(request.server.app.services, callerOf(request), idParam(request)),
};
