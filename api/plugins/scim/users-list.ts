import { listScimUsers } from '../../../lib/scim/users.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAnswer, scimAuth, scimListQuery } from './schemas.ts';

export const usersListRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/Users',
  options: {
    description: 'List SCIM Users (filter, startIndex, count, attributes, excludedAttributes)',
    auth: scimAuth,
    plugins: { valise: { scim: { operation: 'list_users', resourceType: 'User' } } },
    validate: { query: scimListQuery },
    response: { schema: scimAnswer },
  },
  handler: (request) => listScimUsers(request.server.app.services, scimCallerOf(request), request.query),
});
