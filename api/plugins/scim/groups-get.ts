import { getScimGroup } from '../../../lib/scim/groups.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAnswer, scimAuth, scimIdParams, scimProjectionQuery, withVersion } from './schemas.ts';

export const groupsGetRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/Groups/{id}',
  options: {
    description: 'Get a SCIM Group',
    auth: scimAuth,
    plugins: { valise: { scim: { operation: 'list_groups', resourceType: 'Group' } } },
    validate: { params: scimIdParams, query: scimProjectionQuery },
    response: { schema: scimAnswer },
  },
  handler: async (request, h) =>
    withVersion(
      h,
      await getScimGroup(request.server.app.services, scimCallerOf(request), request.params.id, request.query),
    ),
});
