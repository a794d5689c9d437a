import { patchScimGroup } from '../../../lib/scim/groups.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAuth, scimGroup, scimIdParams, scimPatchBody, scimPayload, scimProtocol, withVersion } from './schemas.ts';

export const groupsPatchRoute = defineRoute({
  method: 'PATCH',
  path: '/v1/scim/Groups/{id}',
  options: {
    id: 'scim.patchGroup',
    description: 'Change a SCIM Group (RFC 7644 PatchOp)',
    tags: ['api', 'scim'],
    auth: scimAuth,
    payload: scimPayload,
    plugins: { valise: scimProtocol({ operation: 'update_group', resourceType: 'Group' }) },
    validate: { params: scimIdParams, payload: scimPatchBody },
    response: { schema: scimGroup },
  },
  handler: async (request, h) =>
    withVersion(
      h,
      await patchScimGroup(request.server.app.services, scimCallerOf(request), request.params.id, request.payload),
    ),
});
