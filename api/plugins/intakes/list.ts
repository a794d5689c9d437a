import Joi from 'joi';
import { type ListIntakesInput, listIntakes } from '../../../lib/intakes/service.ts';
import { INTAKE_STATUSES } from '../../../lib/intakes/vocabulary.ts';
import { defineRoute } from '../../route.ts';
import { pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { intakeList } from './schemas.ts';

export const listRoute = defineRoute({
  method: 'GET',
  path: '/v1/intakes',
  options: {
    id: 'intakes.list',
    description: 'List intakes',
    notes: 'Newest first. Deleted intakes are not listed.',
    tags: ['api', 'intakes'],
    plugins: { valise: { scope: 'intake:read' } },
    validate: {
      query: Joi.object<ListIntakesInput>({
        ...pageQuery(),
        status: Joi.string().valid(...INTAKE_STATUSES.filter((status) => status !== 'deleted')),
      }),
    },
    response: { schema: intakeList },
  },
  handler: (request) => listIntakes(request.server.app.services, callerOf(request), request.query),
});
