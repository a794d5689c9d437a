import Joi from 'joi';
import { BROKEN_LINK_REASONS, verifyAuditChain } from '../../../lib/audit/chain.ts';
import { tenantOf } from '../../../lib/tenancy.ts';
import { defineRoute } from '../../route.ts';
import { id } from '../../schemas.ts';
import { callerOf } from '../../types.ts';

const sha256Hex = Joi.string().pattern(/^[0-9a-f]{64}$/, 'SHA-256 hex');
const chainPoint = (label: string) =>
  Joi.object({ seq: Joi.number().integer().min(0).required(), hash: sha256Hex.required() }).label(label);

const verification = Joi.object({
  object: Joi.string().valid('audit_verification').required(),
  valid: Joi.boolean().required(),
  entries_checked: Joi.number().integer().min(0).required(),
  anchor: chainPoint('AuditChainAnchor').required(),
  head: chainPoint('AuditChainHead').allow(null).required(),
  first_broken: Joi.object({
    id: id.required(),
    seq: Joi.number().integer().required(),
    reason: Joi.string()
      .valid(...BROKEN_LINK_REASONS)
      .required(),
    detail: Joi.string().required(),
  })
    .label('AuditBrokenLink')
    .allow(null)
    .required(),
}).label('AuditVerification');

export const verifyAuditRoute = defineRoute({
  method: 'GET',
  path: '/v1/audit/verify',
  options: {
    id: 'audit.verify',
    description: "Verify the audit log's hash chain",
    notes:
      "Walks the calling environment's chain from its anchor (where retention last purged it), recomputing every entry's hash, and reports the first broken link: `edited`, `missing` (on the entry after a gap) or `reordered`. `head` is the last sound entry: keep its hash to notice later that newer entries were removed.",
    tags: ['api', 'audit'],
    plugins: { valise: { scope: 'audit:read', rateClass: 'expensive' } },
    response: { schema: verification },
  },
  handler: async (request) => {
    const result = await verifyAuditChain(request.server.app.services.db, tenantOf(callerOf(request)));
    return { object: 'audit_verification' as const, ...result };
  },
});
