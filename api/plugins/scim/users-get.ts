import { getScimUser } from '../../../lib/scim/users.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAnswer, scimAuth, scimIdParams, scimProjectionQuery, withVersion } from './schemas.ts';

export const usersGetRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/Users/{id}',
  options: {
    description: 'Get a SCIM User',
    auth: scimAuth,
    plugins: { valise: { scim: { operation: 'list_users', resourceType: 'User' } } },
    validate: { params: scimIdParams, query: scimProjectionQuery },
    response: { schema: scimAnswer },
  },
  handler: async (request, h) =>
    withVersion(
      h,
      await getScimUser(request.server.app.services, scimCallerOf(request), request.params.id, request.query),
    ),
});
