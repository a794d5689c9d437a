import Joi from 'joi';
import { type UpdateRecipientInput, updateRecipient } from '../../../lib/recipients/service.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { emailAddress, organisation, personName, recipient, tags } from './schemas.ts';

export const updateRoute = defineRoute({
  method: 'PATCH',
  path: '/v1/recipients/{id}',
  options: {
    id: 'recipients.update',
    description: 'Change an address-book entry',
    notes:
      '`name`, `organisation` (null or empty clears them), `tags` (replaces them) and `email`. A new `email` ' +
      'corrects the entry: links already sent stay with the address they were mailed to. An address another ' +
      'entry has is refused with 409.',
    tags: ['api', 'recipients'],
    plugins: {
      valise: {
        scope: 'recipients:write',
        audit: { action: 'recipient.update', resourceType: 'recipient' },
        openapi: { errors: [409] },
      },
    },
    validate: {
      params: idParams,
      payload: Joi.object<UpdateRecipientInput>({ email: emailAddress, name: personName, organisation, tags })
        .min(1)
        .label('UpdateRecipient'),
    },
    response: { schema: recipient },
  },
  handler: (request) =>
    updateRecipient(request.server.app.services, callerOf(request), request.params.id, request.payload),
});
