import { patchScimGroup } from '../../../lib/scim/groups.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAnswer, scimAuth, scimIdParams, scimPatchBody, scimPayload, withVersion } from './schemas.ts';

export const groupsPatchRoute = defineRoute({
  method: 'PATCH',
  path: '/v1/scim/Groups/{id}',
  options: {
    description: 'Change a SCIM Group (RFC 7644 PatchOp)',
    auth: scimAuth,
    payload: scimPayload,
    plugins: { valise: { scim: { operation: 'update_group', resourceType: 'Group' } } },
    validate: { params: scimIdParams, payload: scimPatchBody },
    response: { schema: scimAnswer },
  },
  handler: async (request, h) =>
    withVersion(
      h,
      await patchScimGroup(request.server.app.services, scimCallerOf(request), request.params.id, request.payload),
    ),
});
