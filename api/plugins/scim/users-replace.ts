import { replaceScimUser } from '../../../lib/scim/users.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAnswer, scimAuth, scimIdParams, scimPayload, scimResourceBody, withVersion } from './schemas.ts';

export const usersReplaceRoute = defineRoute({
  method: 'PUT',
  path: '/v1/scim/Users/{id}',
  options: {
    description: 'Replace a SCIM User',
    auth: scimAuth,
    payload: scimPayload,
    plugins: { valise: { scim: { operation: 'update_user', resourceType: 'User' } } },
    validate: { params: scimIdParams, payload: scimResourceBody },
    response: { schema: scimAnswer },
  },
  handler: async (request, h) =>
    withVersion(
      h,
      await replaceScimUser(request.server.app.services, scimCallerOf(request), request.params.id, request.payload),
    ),
});
