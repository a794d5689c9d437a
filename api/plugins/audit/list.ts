import Joi from 'joi';
import { type AuditQuery, listAudit } from '../../../lib/audit/list.ts';
import { AUDIT_OUTCOMES } from '../../../lib/vocabulary.ts';
import { defineRoute } from '../../route.ts';
import { id, listEnvelope, pageQuery, text, timestamp } from '../../schemas.ts';
import { callerOf } from '../../types.ts';

export const auditEntryFields = {
  id: id.required(),
  object: Joi.string().valid('audit_entry').required(),
  workspace_id: id.required(),
  actor_id: id.allow(null).required(),
  api_key_id: id.allow(null).required(),
  action: Joi.string().required(),
  resource_type: Joi.string().allow(null).required(),
  resource_id: Joi.string().allow(null).required(),
  ip_address: Joi.string().allow(null).required(),
  user_agent: Joi.string().allow(null, '').required(),
  country_code: Joi.string().allow(null).required(),
  status: Joi.string()
    .valid(...AUDIT_OUTCOMES)
    .required(),
  request_id: Joi.string().allow(null).required(),
  metadata: Joi.object().unknown(true).required(),
  created_at: timestamp.required(),
};

const auditEntry = Joi.object(auditEntryFields).label('AuditEntry');

/** The list's filters, shared with the export. */
export const auditFilters = {
  action: text.max(200),
  actor_id: id,
  resource_type: text.max(100),
  since: timestamp,
  until: timestamp,
};

export const listAuditRoute = defineRoute({
  method: 'GET',
  path: '/v1/audit',
  options: {
    id: 'audit.list',
    description: 'Query the audit log',
    notes: 'Newest first. `since` is inclusive, `until` exclusive. Only the calling environment.',
    tags: ['api', 'audit'],
    plugins: { valise: { scope: 'audit:read', rateClass: 'expensive' } },
    validate: {
      query: Joi.object<AuditQuery>({
        ...pageQuery(500),
        ...auditFilters,
      }),
    },
    response: { schema: listEnvelope(auditEntry, 'AuditEntryList') },
  },
  handler: (request) => listAudit(request.server.app.services, callerOf(request), request.query),
});
