import { getDocument } from '../../../lib/intakes/documents.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { documentParams, intakeDocument } from './schemas.ts';

export const documentsGetRoute = defineRoute({
  method: 'GET',
  path: '/v1/intakes/{id}/documents/{docId}',
  options: {
    id: 'intakes.getDocument',
    description: 'Get an intake document',
    notes:
      'Each file\u2019s `download_url` is fresh on each call and valid 300 s (`download_expires_in`); an expired one ' +
      'answers 403. End-to-end documents download as their encrypted blobs: decrypt them with the intake\u2019s ' +
      'private key (SDK, or `valise intake get`). 403 for a sandbox key asking for a live intake; 410 once the ' +
      'document was deleted. The spec names this route\u2019s scope `intake_read`: it and `intake:read` both work.',
    tags: ['api', 'intakes'],
    // A deleted document (its retention ended, or its owner deleted it): 410 `not_found`.
    plugins: { valise: { scope: 'intake:read', openapi: { errors: [410] } } },
    validate: { params: documentParams },
    response: { schema: intakeDocument },
  },
  handler: (request) =>
    getDocument(request.server.app.services, callerOf(request), request.params.id, request.params.docId),
});
