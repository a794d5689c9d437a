import { getForm } from '../../../lib/intakes/submissions.ts';
import { defineRoute } from '../../route.ts';
import { submitterOf } from '../../types.ts';
import { intakeForm, intakeParams } from './schemas.ts';

export const formRoute = defineRoute({
  method: 'GET',
  path: '/v1/intakes/{id}/form',
  options: {
    id: 'intakes.getForm',
    description: 'Read an intake\u2019s form (publishable key)',
    notes:
      'Authenticated by the intake\u2019s publishable key (`Authorization: Bearer cip_…`): what a submitter needs to ' +
      'send files, including the owner\u2019s public key for end-to-end intakes. Rate-limited per client address.',
    tags: ['api', 'intakes'],
    auth: 'publishable-key',
    validate: { params: intakeParams },
    response: { schema: intakeForm },
  },
  handler: (request) => getForm(request.server.app.services, submitterOf(request)),
});
