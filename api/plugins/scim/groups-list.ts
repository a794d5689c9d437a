import { listScimGroups } from '../../../lib/scim/groups.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAuth, scimGroupList, scimListQuery, scimProtocol } from './schemas.ts';

export const groupsListRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/Groups',
  options: {
    id: 'scim.listGroups',
    description: 'List SCIM Groups (filter, startIndex, count, attributes, excludedAttributes)',
    tags: ['api', 'scim'],
    auth: scimAuth,
    plugins: { valise: scimProtocol({ operation: 'list_groups', resourceType: 'Group' }) },
    validate: { query: scimListQuery },
    response: { schema: scimGroupList },
  },
  handler: (request) => listScimGroups(request.server.app.services, scimCallerOf(request), request.query),
});
