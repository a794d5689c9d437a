import Joi from 'joi';
import {
  listScimAudit,
  SCIM_AUDIT_DEFAULT_LIMIT,
  SCIM_AUDIT_MAX_LIMIT,
  type ScimAuditQuery,
} from '../../../lib/scim/audit.ts';
import { SCIM_OPERATIONS } from '../../../lib/scim/vocabulary.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { scimAuditList } from './schemas.ts';

export const auditRoute = defineRoute({
  method: 'GET',
  path: '/v1/scim/audit',
  options: {
    id: 'scim.audit',
    description: 'List SCIM audit events',
    notes: `What identity providers did through SCIM, newest first. \`limit\` is clamped into 1..${SCIM_AUDIT_MAX_LIMIT} (default ${SCIM_AUDIT_DEFAULT_LIMIT}); \`filter\` echoes what was applied.`,
    tags: ['api', 'scim'],
    plugins: { valise: { scope: 'audit:read', rateClass: 'expensive' } },
    validate: {
      query: Joi.object<ScimAuditQuery>({
        limit: Joi.number()
          .integer()
          .unsafe()
          .default(SCIM_AUDIT_DEFAULT_LIMIT)
          .custom((value: number) => Math.min(SCIM_AUDIT_MAX_LIMIT, Math.max(1, value))),
        operation: Joi.string().valid(...SCIM_OPERATIONS),
      }),
    },
    response: { schema: scimAuditList },
  },
  handler: (request) => listScimAudit(request.server.app.services, callerOf(request), request.query),
});
