import Joi from 'joi';
import { ENVIRONMENTS, KEY_TYPES } from '../../../lib/vocabulary.ts';
import { describeCaller } from '../../../lib/workspaces/me.ts';
import { defineRoute } from '../../route.ts';
import { id } from '../../schemas.ts';
import { callerOf } from '../../types.ts';

export const meRoute = defineRoute({
  method: 'GET',
  path: '/v1/me',
  options: {
    id: 'meta.me',
    description: 'Who is calling',
    notes: 'Resolves the calling key into its workspace, user, environment and effective scopes.',
    tags: ['api', 'meta'],
    response: {
      schema: Joi.object({
        object: Joi.string().valid('me').required(),
        workspace: Joi.object({ id: id.required(), name: Joi.string().required() }).required(),
        user: Joi.object({
          id: id.required(),
          email: Joi.string().required(),
          role: Joi.string().required(),
        }).required(),
        environment: Joi.string()
          .valid(...ENVIRONMENTS)
          .required(),
        api_key: Joi.object({
          id: id.required(),
          key_type: Joi.string()
            .valid(...KEY_TYPES)
            .required(),
        }).required(),
        scopes: Joi.array().items(Joi.string()).required(),
      }).label('Me'),
    },
  },
  handler: (request) => describeCaller(request.server.app.services, callerOf(request)),
});
