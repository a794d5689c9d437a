import Joi from 'joi';
import { deleteScimGroup } from '../../../lib/scim/groups.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAuth, scimIdParams, scimProtocol } from './schemas.ts';

export const groupsDeleteRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/scim/Groups/{id}',
  options: {
    id: 'scim.deleteGroup',
    description: 'Delete a SCIM Group',
    tags: ['api', 'scim'],
    auth: scimAuth,
    plugins: { valise: scimProtocol({ operation: 'delete_group', resourceType: 'Group' }) },
    validate: { params: scimIdParams },
    response: { status: { 204: Joi.any().valid(null, '') } },
  },
  handler: async (request, h) => {
    await deleteScimGroup(request.server.app.services, scimCallerOf(request), request.params.id);
    return h.response().code(204);
  },
});
