import { listScimUsers } from '../../../lib/scim/users.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAuth, scimListQuery, scimProtocol, scimUserList } from './schemas.ts';

export const usersListRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/Users',
  options: {
    id: 'scim.listUsers',
    description: 'List SCIM Users (filter, startIndex, count, attributes, excludedAttributes)',
    tags: ['api', 'scim'],
    auth: scimAuth,
    plugins: { valise: scimProtocol({ operation: 'list_users', resourceType: 'User' }) },
    validate: { query: scimListQuery },
    response: { schema: scimUserList },
  },
  handler: (request) => listScimUsers(request.server.app.services, scimCallerOf(request), request.query),
});
