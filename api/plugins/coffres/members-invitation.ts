import Joi from 'joi';
import { resendInvitation } from '../../../lib/coffres/members.ts';
import { defineRoute, orNull } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { expiresInDays, invitedMember, memberParams } from './schemas.ts';

export const membersInvitationRoute = defineRoute({
  method: 'POST',
  path: '/v1/coffres/{id}/members/{memberId}/invitation',
  options: {
    id: 'coffres.resendInvitation',
    description: 'Send a member a new invitation link',
    notes: 'A new link, mailed again and in this answer once; every earlier link of this member stops working.',
    tags: ['api', 'coffres'],
    plugins: {
      valise: {
        scope: 'coffres:manage',
        audit: { action: 'coffre.resend_invitation', resourceType: 'coffre' },
        openapi: { errors: [410] },
      },
    },
    validate: {
      params: memberParams,
      payload: orNull(
        Joi.object<{ expires_in_days?: number | undefined }>({ expires_in_days: expiresInDays }).label(
          'ResendCoffreInvitation',
        ),
      ),
    },
    response: { schema: invitedMember },
  },
  handler: (request) =>
    resendInvitation(
      request.server.app.services,
      callerOf(request),
      request.params.id,
      request.params.memberId,
      request.payload,
    ),
});
