import { deleteIntake } from '../../../lib/intakes/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { deletedIntake, intakeParams } from './schemas.ts';

export const removeRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/intakes/{id}',
  options: {
    id: 'intakes.delete',
    description: 'Delete an intake and its documents',
    notes: 'Every document\u2019s keys are destroyed at once and its blobs removed. A second DELETE is 404.',
    tags: ['api', 'intakes'],
    plugins: { valise: { scope: 'intake:write', audit: { action: 'intake.delete', resourceType: 'intake' } } },
    validate: { params: intakeParams },
    response: { schema: deletedIntake },
  },
  handler: (request) => deleteIntake(request.server.app.services, callerOf(request), request.params.id),
});
