import { createScimUser } from '../../../lib/scim/users.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAuth, scimPayload, scimProtocol, scimUser, scimUserBody, withVersion } from './schemas.ts';

export const usersCreateRoute = defineRoute({
  method: 'POST',
  path: '/v1/scim/Users',
  options: {
    id: 'scim.createUser',
    description: 'Create a SCIM User',
    tags: ['api', 'scim'],
    auth: scimAuth,
    payload: scimPayload,
    plugins: { valise: scimProtocol({ operation: 'create_user', resourceType: 'User' }, { uniqueness: true }) },
    validate: { payload: scimUserBody },
    response: { status: { 201: scimUser } },
  },
  handler: async (request, h) =>
    withVersion(h, await createScimUser(request.server.app.services, scimCallerOf(request), request.payload), 201),
});
