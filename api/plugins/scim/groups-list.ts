import { listScimGroups } from '../../../lib/scim/groups.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAnswer, scimAuth, scimListQuery } from './schemas.ts';

export const groupsListRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/Groups',
  options: {
    description: 'List SCIM Groups (filter, startIndex, count, attributes, excludedAttributes)',
    auth: scimAuth,
    plugins: { valise: { scim: { operation: 'list_groups', resourceType: 'Group' } } },
    validate: { query: scimListQuery },
    response: { schema: scimAnswer },
  },
  handler: (request) => listScimGroups(request.server.app.services, scimCallerOf(request), request.query),
});
