import { patchScimUser } from '../../../lib/scim/users.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAnswer, scimAuth, scimIdParams, scimPatchBody, scimPayload, withVersion } from './schemas.ts';

export const usersPatchRoute = defineRoute({
  method: 'PATCH',
  path: '/v1/scim/Users/{id}',
  options: {
    description: 'Change a SCIM User (RFC 7644 PatchOp)',
    auth: scimAuth,
    payload: scimPayload,
    plugins: { valise: { scim: { operation: 'update_user', resourceType: 'User' } } },
    validate: { params: scimIdParams, payload: scimPatchBody },
    response: { schema: scimAnswer },
  },
  handler: async (request, h) =>
    withVersion(
      h,
      await patchScimUser(request.server.app.services, scimCallerOf(request), request.params.id, request.payload),
    ),
});
