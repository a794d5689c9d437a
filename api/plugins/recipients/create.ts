import Joi from 'joi';
import { type CreateRecipientInput, createRecipient } from '../../../lib/recipients/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { emailAddress, organisation, personName, recipient, tags } from './schemas.ts';

export const createRoute = defineRoute({
  method: 'POST',
  path: '/v1/recipients',
  options: {
    id: 'recipients.create',
    description: 'Add an address-book entry',
    notes:
      'The domain of `email` is stored in lower case; an address already in the address book, whatever its case, ' +
      'is refused with 409 (`recipient_id` names the entry). Tags are lower-cased and de-duplicated, at most 20.',
    tags: ['api', 'recipients'],
    plugins: {
      valise: {
        scope: 'recipients:write',
        audit: { action: 'recipient.create', resourceType: 'recipient' },
        openapi: { errors: [409] },
      },
    },
    validate: {
      payload: Joi.object<CreateRecipientInput>({
        email: emailAddress.required(),
        name: personName,
        organisation,
        tags,
      }).label('CreateRecipient'),
    },
    response: { status: { 201: recipient } },
  },
  handler: async (request, h) =>
    h.response(await createRecipient(request.server.app.services, callerOf(request), request.payload)).code(201),
});
