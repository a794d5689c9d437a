import { revokeMember } from '../../../lib/coffres/members.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { member, memberParams } from './schemas.ts';

export const membersRemoveRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/coffres/{id}/members/{memberId}',
  options: {
    id: 'coffres.revokeMember',
    description: 'Revoke a member',
    notes:
      'Their invitation link is refused (403) from this moment, download links they hold too. 410 if revoked already.',
    tags: ['api', 'coffres'],
    plugins: {
      valise: {
        scope: 'coffres:manage',
        audit: { action: 'coffre.revoke_member', resourceType: 'coffre' },
        openapi: { errors: [410] },
      },
    },
    validate: { params: memberParams },
    response: { schema: member },
  },
  handler: (request) =>
    revokeMember(request.server.app.services, callerOf(request), request.params.id, request.params.memberId),
});
