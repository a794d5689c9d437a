import Joi from 'joi';
import { listRecipients, type RecipientListQuery } from '../../../lib/recipients/service.ts';
import { defineRoute } from '../../route.ts';
import { pageQuery, text } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { recipientList, tag } from './schemas.ts';

export const listRoute = defineRoute({
  method: 'GET',
  path: '/v1/recipients',
  options: {
    id: 'recipients.list',
    description: 'List the address book',
    notes:
      'Newest first, each entry with its statistics. `search` matches part of the address, name or organisation ' +
      '(case-insensitive); `tag` keeps entries carrying that tag.',
    tags: ['api', 'recipients'],
    plugins: { valise: { scope: 'recipients:read' } },
    validate: {
      query: Joi.object<RecipientListQuery>({ ...pageQuery(), search: text.trim().min(1).max(200), tag }),
    },
    response: { schema: recipientList },
  },
  handler: (request) => listRecipients(request.server.app.services, callerOf(request), request.query),
});
