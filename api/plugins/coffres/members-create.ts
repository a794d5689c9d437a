import Joi from 'joi';
import { type InviteMemberInput, inviteMember } from '../../../lib/coffres/members.ts';
import { defineRoute } from '../../route.ts';
import { text } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { access, coffreParams, email, expiresInDays, invitedMember } from './schemas.ts';

export const membersCreateRoute = defineRoute({
  method: 'POST',
  path: '/v1/coffres/{id}/members',
  options: {
    id: 'coffres.inviteMember',
    description: 'Invite a member to a vault',
    notes:
      'Mails `email` a personal, signed invitation link (`/v/{token}`) that works for `expires_in_days` (7 by ' +
      'default). `access`: `view`, `download` or `upload` (each includes the ones before). The link is also in this ' +
      'answer, once. 409 when the address is a member already.',
    tags: ['api', 'coffres'],
    plugins: {
      valise: {
        scope: 'coffres:manage',
        audit: { action: 'coffre.invite_member', resourceType: 'coffre' },
        openapi: { errors: [410] },
      },
    },
    validate: {
      params: coffreParams,
      payload: Joi.object<InviteMemberInput>({
        email: email.required(),
        name: text.trim().max(200).allow(null, ''),
        access: access.required(),
        expires_in_days: expiresInDays,
      }).label('InviteCoffreMember'),
    },
    response: { status: { 201: invitedMember } },
  },
  handler: async (request, h) =>
    h
      .response(await inviteMember(request.server.app.services, callerOf(request), request.params.id, request.payload))
      .code(201),
});
