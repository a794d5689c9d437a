import { patchScimUser } from '../../../lib/scim/users.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAuth, scimIdParams, scimPatchBody, scimPayload, scimProtocol, scimUser, withVersion } from './schemas.ts';

export const usersPatchRoute = defineRoute({
  method: 'PATCH',
  path: '/v1/scim/Users/{id}',
  options: {
    id: 'scim.patchUser',
    description: 'Change a SCIM User (RFC 7644 PatchOp)',
    tags: ['api', 'scim'],
    auth: scimAuth,
    payload: scimPayload,
    plugins: { valise: scimProtocol({ operation: 'update_user', resourceType: 'User' }, { uniqueness: true }) },
    validate: { params: scimIdParams, payload: scimPatchBody },
    response: { schema: scimUser },
  },
  handler: async (request, h) =>
    withVersion(
      h,
      await patchScimUser(request.server.app.services, scimCallerOf(request), request.params.id, request.payload),
    ),
});
