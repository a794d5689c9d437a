import Joi from 'joi';
import { type CreateCoffreInput, createCoffre } from '../../../lib/coffres/service.ts';
import { defineRoute } from '../../route.ts';
import { timestamp } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { coffre, description, name } from './schemas.ts';

export const createRoute = defineRoute({
  method: 'POST',
  path: '/v1/coffres',
  options: {
    id: 'coffres.create',
    description: 'Create a vault',
    notes:
      'A vault (data room): a `name`, an optional `description` and an optional `expires_at`. At its expiry members ' +
      'lose access and every item is destroyed (crypto-shredded). Invite members with `POST /v1/coffres/{id}/members`.',
    tags: ['api', 'coffres'],
    plugins: { valise: { scope: 'coffres:write', audit: { action: 'coffre.create', resourceType: 'coffre' } } },
    validate: {
      payload: Joi.object<CreateCoffreInput>({ name: name.required(), description, expires_at: timestamp }).label(
        'CreateCoffre',
      ),
    },
    response: { status: { 201: coffre } },
  },
  handler: async (request, h) =>
    h.response(await createCoffre(request.server.app.services, callerOf(request), request.payload)).code(201),
});
