import { createScimUser } from '../../../lib/scim/users.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAnswer, scimAuth, scimPayload, scimResourceBody, withVersion } from './schemas.ts';

export const usersCreateRoute = defineRoute({
  method: 'POST',
  path: '/v1/scim/Users',
  options: {
    description: 'Create a SCIM User',
    auth: scimAuth,
    payload: scimPayload,
    plugins: { valise: { scim: { operation: 'create_user', resourceType: 'User' } } },
    validate: { payload: scimResourceBody },
    response: { status: { 201: scimAnswer } },
  },
  handler: async (request, h) =>
    withVersion(h, await createScimUser(request.server.app.services, scimCallerOf(request), request.payload), 201),
});
