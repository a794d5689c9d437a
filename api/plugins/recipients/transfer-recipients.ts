import { listTransferRecipients } from '../../../lib/recipients/links.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { transferRecipientList } from './schemas.ts';

export const transferRecipientsRoute = defineRoute({
  method: 'GET',
  path: '/v1/transfers/{id}/recipients',
  options: {
    id: 'transfers.recipients',
    description: "List a transfer's recipients and what each downloaded",
    notes:
      'One page, in the order the addresses were given (at most 50): each with its personal `share_url`, when it ' +
      'was mailed, and the downloads completed through it (docs/recipients.md).',
    tags: ['api', 'transfers'],
    plugins: { valise: { scope: 'transfers:read' } },
    validate: { params: idParams },
    response: { schema: transferRecipientList },
  },
  handler: (request) => listTransferRecipients(request.server.app.services, callerOf(request), request.params.id),
});
