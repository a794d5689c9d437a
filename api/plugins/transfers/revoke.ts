import { revokeTransfer } from '../../../lib/transfers/manage.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { transfer } from './schemas.ts';

export const revokeRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/transfers/{id}',
  options: {
    id: 'transfers.revoke',
    description: 'Revoke a transfer and delete its files',
    notes:
      'The transfer becomes `deleted` and its keys are destroyed at once; the stored objects are deleted by its workflow.',
    tags: ['api', 'transfers'],
    plugins: { valise: { scope: 'transfers:manage', audit: { action: 'transfer.revoke', resourceType: 'transfer' } } },
    validate: { params: idParams },
    response: { schema: transfer },
  },
  handler: (request) => revokeTransfer(request.server.app.services, callerOf(request), request.params.id),
});
