import { getIntake } from '../../../lib/intakes/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { intake, intakeParams } from './schemas.ts';

export const getRoute = defineRoute({
  method: 'GET',
  path: '/v1/intakes/{id}',
  options: {
    id: 'intakes.get',
    description: 'Get an intake',
    tags: ['api', 'intakes'],
    plugins: { valise: { scope: 'intake:read' } },
    validate: { params: intakeParams },
    response: { schema: intake },
  },
  handler: (request) => getIntake(request.server.app.services, callerOf(request), request.params.id),
});
