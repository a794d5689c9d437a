import Joi from 'joi';
import { type UpdateCoffreInput, updateCoffre } from '../../../lib/coffres/service.ts';
import { defineRoute } from '../../route.ts';
import { timestamp } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { coffre, coffreParams, description, name } from './schemas.ts';

export const updateRoute = defineRoute({
  method: 'PATCH',
  path: '/v1/coffres/{id}',
  options: {
    id: 'coffres.update',
    description: 'Change a vault',
    notes: '`name`, `description` (null or empty clears it), `expires_at` (null removes the expiry). 410 once expired.',
    tags: ['api', 'coffres'],
    plugins: {
      valise: {
        scope: 'coffres:write',
        audit: { action: 'coffre.update', resourceType: 'coffre' },
        openapi: { errors: [410] },
      },
    },
    validate: {
      params: coffreParams,
      payload: Joi.object<UpdateCoffreInput>({ name, description, expires_at: timestamp.allow(null) })
        .min(1)
        .label('UpdateCoffre'),
    },
    response: { schema: coffre },
  },
  handler: (request) =>
    updateCoffre(request.server.app.services, callerOf(request), request.params.id, request.payload),
});
