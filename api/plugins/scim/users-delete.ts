import Joi from 'joi';
import { deleteScimUser } from '../../../lib/scim/users.ts';
import { defineRoute } from '../../route.ts';
import { scimCallerOf } from '../../types.ts';
import { scimAuth, scimIdParams, scimProtocol } from './schemas.ts';

export const usersDeleteRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/scim/Users/{id}',
  options: {
    id: 'scim.deleteUser',
    description: 'Delete a SCIM User',
    tags: ['api', 'scim'],
    auth: scimAuth,
    plugins: { valise: scimProtocol({ operation: 'delete_user', resourceType: 'User' }) },
    validate: { params: scimIdParams },
    response: { status: { 204: Joi.any().valid(null, '') } },
  },
  handler: async (request, h) => {
    await deleteScimUser(request.server.app.services, scimCallerOf(request), request.params.id);
    return h.response().code(204);
  },
});
