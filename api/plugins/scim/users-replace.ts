import { replaceScimUser } from '../../../lib/scim/users.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAuth, scimIdParams, scimPayload, scimProtocol, scimUser, scimUserBody, withVersion } from './schemas.ts';

export const usersReplaceRoute = defineRoute({
  method: 'PUT',
  path: '/v1/scim/Users/{id}',
  options: {
    id: 'scim.replaceUser',
    description: 'Replace a SCIM User',
    tags: ['api', 'scim'],
    auth: scimAuth,
    payload: scimPayload,
    plugins: { valise: scimProtocol({ operation: 'update_user', resourceType: 'User' }, { uniqueness: true }) },
    validate: { params: scimIdParams, payload: scimUserBody },
    response: { schema: scimUser },
  },
  handler: async (request, h) =>
    withVersion(
      h,
      await replaceScimUser(request.server.app.services, scimCallerOf(request), request.params.id, request.payload),
    ),
});
