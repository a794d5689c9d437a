import { closeIntake } from '../../../lib/intakes/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { intake, intakeParams } from './schemas.ts';

export const closeRoute = defineRoute({
  method: 'POST',
  path: '/v1/intakes/{id}/close',
  options: {
    id: 'intakes.close',
    description: 'Close an intake',
    notes: 'It stops accepting submissions; its documents stay. Closing a closed intake changes nothing.',
    tags: ['api', 'intakes'],
    plugins: { valise: { scope: 'intake:write', audit: { action: 'intake.close', resourceType: 'intake' } } },
    validate: { params: intakeParams },
    response: { schema: intake },
  },
  handler: (request) => closeIntake(request.server.app.services, callerOf(request), request.params.id),
});
