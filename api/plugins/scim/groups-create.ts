import { createScimGroup } from '../../../lib/scim/groups.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAnswer, scimAuth, scimPayload, scimResourceBody, withVersion } from './schemas.ts';

export const groupsCreateRoute = defineRoute({
  method: 'POST',
  path: '/v1/scim/Groups',
  options: {
    description: 'Create a SCIM Group',
    auth: scimAuth,
    payload: scimPayload,
    plugins: { valise: { scim: { operation: 'create_group', resourceType: 'Group' } } },
    validate: { payload: scimResourceBody },
    response: { status: { 201: scimAnswer } },
  },
  handler: async (request, h) =>
    withVersion(h, await createScimGroup(request.server.app.services, scimCallerOf(request), request.payload), 201),
});
