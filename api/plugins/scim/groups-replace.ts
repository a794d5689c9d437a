import { replaceScimGroup } from '../../../lib/scim/groups.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAuth, scimGroup, scimGroupBody, scimIdParams, scimPayload, scimProtocol, withVersion } from './schemas.ts';

export const groupsReplaceRoute = defineRoute({
  method: 'PUT',
  path: '/v1/scim/Groups/{id}',
  options: {
    id: 'scim.replaceGroup',
    description: 'Replace a SCIM Group',
    tags: ['api', 'scim'],
    auth: scimAuth,
    payload: scimPayload,
    plugins: { valise: scimProtocol({ operation: 'update_group', resourceType: 'Group' }) },
    validate: { params: scimIdParams, payload: scimGroupBody },
    response: { schema: scimGroup },
  },
  handler: async (request, h) =>
    withVersion(
      h,
      await replaceScimGroup(request.server.app.services, scimCallerOf(request), request.params.id, request.payload),
    ),
});
