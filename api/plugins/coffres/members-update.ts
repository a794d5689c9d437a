import Joi from 'joi';
import { updateMember } from '../../../lib/coffres/members.ts';
import type { CoffreAccessLevel } from '../../../lib/coffres/vocabulary.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { access, member, memberParams } from './schemas.ts';

export const membersUpdateRoute = defineRoute({
  method: 'PATCH',
  path: '/v1/coffres/{id}/members/{memberId}',
  options: {
    id: 'coffres.updateMember',
    description: "Change a member's access",
    notes: 'Applies from their next request, through the link they already have. 410 for a revoked member.',
    tags: ['api', 'coffres'],
    plugins: {
      valise: {
        scope: 'coffres:manage',
        audit: { action: 'coffre.update_member', resourceType: 'coffre' },
        openapi: { errors: [410] },
      },
    },
    validate: {
      params: memberParams,
      payload: Joi.object<{ access: CoffreAccessLevel }>({ access: access.required() }).label('UpdateCoffreMember'),
    },
    response: { schema: member },
  },
  handler: (request) =>
    updateMember(
      request.server.app.services,
      callerOf(request),
      request.params.id,
      request.params.memberId,
      request.payload,
    ),
});
