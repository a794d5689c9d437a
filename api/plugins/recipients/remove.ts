import { deleteRecipient } from '../../../lib/recipients/service.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { deletedRecipient } from './schemas.ts';

export const removeRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/recipients/{id}',
  options: {
    id: 'recipients.delete',
    description: 'Delete an address-book entry',
    notes:
      'The entry and its statistics go; personal links already sent keep working, and transfers keep listing the ' +
      'address (with `recipient_id` null). Sending to the address again creates a new entry.',
    tags: ['api', 'recipients'],
    plugins: {
      valise: { scope: 'recipients:write', audit: { action: 'recipient.delete', resourceType: 'recipient' } },
    },
    validate: { params: idParams },
    response: { schema: deletedRecipient },
  },
  handler: (request) => deleteRecipient(request.server.app.services, callerOf(request), request.params.id),
});
