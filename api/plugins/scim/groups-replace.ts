import { replaceScimGroup } from '../../../lib/scim/groups.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAnswer, scimAuth, scimIdParams, scimPayload, scimResourceBody, withVersion } from './schemas.ts';

export const groupsReplaceRoute = defineRoute({
  method: 'PUT',
  path: '/v1/scim/Groups/{id}',
  options: {
    description: 'Replace a SCIM Group',
    auth: scimAuth,
    payload: scimPayload,
    plugins: { valise: { scim: { operation: 'update_group', resourceType: 'Group' } } },
    validate: { params: scimIdParams, payload: scimResourceBody },
    response: { schema: scimAnswer },
  },
  handler: async (request, h) =>
    withVersion(
      h,
      await replaceScimGroup(request.server.app.services, scimCallerOf(request), request.params.id, request.payload),
    ),
});
