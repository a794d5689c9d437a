import Joi from 'joi';
import { type ApprovalInput, decideApproval } from '../../../lib/transfers/manage.ts';
import { APPROVAL_DECISIONS } from '../../../lib/vocabulary.ts';
import { defineRoute } from '../../route.ts';
import { idParams, text } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { transfer } from './schemas.ts';

export const approveRoute = defineRoute({
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
      payload: Joi.object<ApprovalInput>({
        decision: Joi.string()
          .valid(...APPROVAL_DECISIONS)
          .required(),
        note: text.max(2000).allow(''),
      }).label('ApprovalDecision'),
    },
    response: { schema: transfer },
  },
  handler: (request) =>
    decideApproval(request.server.app.services, callerOf(request), request.params.id, request.payload),
});
