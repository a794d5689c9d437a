import { listPublishableKeys } from '../../../lib/intakes/owner-keys.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { intakeParams, publishableKeyList } from './schemas.ts';

export const keysListRoute = defineRoute({
  method: 'GET',
  path: '/v1/intakes/{id}/publishable-keys',
  options: {
    id: 'intakes.listPublishableKeys',
    description: 'List an intake\u2019s publishable keys',
    notes: 'With their values: they are meant to be embedded in pages. Revoked keys are listed with `revoked_at`.',
    tags: ['api', 'intakes'],
    plugins: { valise: { scope: 'intake:read' } },
    validate: { params: intakeParams },
    response: { schema: publishableKeyList },
  },
  handler: (request) => listPublishableKeys(request.server.app.services, callerOf(request), request.params.id),
});
