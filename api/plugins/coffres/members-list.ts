import Joi from 'joi';
import { listMembers } from '../../../lib/coffres/members.ts';
import type { PageQuery } from '../../../lib/pagination.ts';
import { defineRoute } from '../../route.ts';
import { pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { coffreParams, memberList } from './schemas.ts';

export const membersListRoute = defineRoute({
  method: 'GET',
  path: '/v1/coffres/{id}/members',
  options: {
    id: 'coffres.listMembers',
    description: "List a vault's members",
    notes: 'Newest first, revoked members included (`status` `revoked`). Links are never listed.',
    tags: ['api', 'coffres'],
    plugins: { valise: { scope: 'coffres:read' } },
    validate: { params: coffreParams, query: Joi.object<PageQuery>(pageQuery()) },
    response: { schema: memberList },
  },
  handler: (request) => listMembers(request.server.app.services, callerOf(request), request.params.id, request.query),
});
