import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { decideApproval } from '../../../lib/transfers/manage.ts';
import { idParams, text } from '../../schemas.ts';
import { callerOf, idParam } from '../../types.ts';
import { transfer } from './schemas.ts';

export const approveRoute: ServerRoute = {
  method: 'POST',
  path: '/v1/transfers/{id}/approve',
  options: {
    id: 'transfers.approve',
    description: 'Approve or reject a transfer',
    notes:
      'A decision may be taken at any time (while the files upload, while they are scanned, or once active) and stands as taken; approval_status is pending until then. 422 validation_error when the transfer does not require approval. The owner is e-mailed the decision; once the transfer is approved and active, the recipient gets the link (never when rejected).',
    tags: ['api', 'transfers'],
    plugins: {
      valise: {
        scope: 'transfers:manage',
        openapi: { errors: [422] },
        audit: { action: 'transfer.approve', resourceType: 'transfer' },
      },
    },
    validate: {
      params: idParams,
      payload: Joi.object({
        decision: Joi.string().valid('approved', 'rejected').required(),
        note: text.max(2000).allow(''),
      }).label('ApprovalDecision'),
    },
    response: { schema: transfer },
  },
  handler: (request) =>
    decideApproval(request.server.app.services, callerOf(request), idParam(request), request.payload as never),
};
