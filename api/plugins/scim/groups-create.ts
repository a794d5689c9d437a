import { createScimGroup } from '../../../lib/scim/groups.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAuth, scimGroup, scimGroupBody, scimPayload, scimProtocol, withVersion } from './schemas.ts';

export const groupsCreateRoute = defineRoute({
  method: 'POST',
  path: '/v1/scim/Groups',
  options: {
    id: 'scim.createGroup',
    description: 'Create a SCIM Group',
    tags: ['api', 'scim'],
    auth: scimAuth,
    payload: scimPayload,
    plugins: { valise: scimProtocol({ operation: 'create_group', resourceType: 'Group' }) },
    validate: { payload: scimGroupBody },
    response: { status: { 201: scimGroup } },
  },
  handler: async (request, h) =>
    withVersion(h, await createScimGroup(request.server.app.services, scimCallerOf(request), request.payload), 201),
});
