import { getScimUser } from '../../../lib/scim/users.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAuth, scimIdParams, scimProjectionQuery, scimProtocol, scimUser, withVersion } from './schemas.ts';

export const usersGetRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/Users/{id}',
  options: {
    id: 'scim.getUser',
    description: 'Get a SCIM User',
    tags: ['api', 'scim'],
    auth: scimAuth,
    plugins: { valise: scimProtocol({ operation: 'list_users', resourceType: 'User' }, { notModified: true }) },
    validate: { params: scimIdParams, query: scimProjectionQuery },
    response: { schema: scimUser },
  },
  handler: async (request, h) =>
    withVersion(
      h,
      await getScimUser(request.server.app.services, scimCallerOf(request), request.params.id, request.query),
    ),
});
