import { getRecipient } from '../../../lib/recipients/service.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { recipient } from './schemas.ts';

export const getRoute = defineRoute({
  method: 'GET',
  path: '/v1/recipients/{id}',
  options: {
    id: 'recipients.get',
    description: 'Fetch an address-book entry with its statistics',
    notes: '`stats`: transfers sent to the address, downloads completed through its personal links, and when.',
    tags: ['api', 'recipients'],
    plugins: { valise: { scope: 'recipients:read' } },
    validate: { params: idParams },
    response: { schema: recipient },
  },
  handler: (request) => getRecipient(request.server.app.services, callerOf(request), request.params.id),
});
