import { getScimGroup } from '../../../lib/scim/groups.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAuth, scimGroup, scimIdParams, scimProjectionQuery, scimProtocol, withVersion } from './schemas.ts';

export const groupsGetRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/Groups/{id}',
  options: {
    id: 'scim.getGroup',
    description: 'Get a SCIM Group',
    tags: ['api', 'scim'],
    auth: scimAuth,
    plugins: { valise: scimProtocol({ operation: 'list_groups', resourceType: 'Group' }, { notModified: true }) },
    validate: { params: scimIdParams, query: scimProjectionQuery },
    response: { schema: scimGroup },
  },
  handler: async (request, h) =>
    withVersion(
      h,
      await getScimGroup(request.server.app.services, scimCallerOf(request), request.params.id, request.query),
    ),
});
