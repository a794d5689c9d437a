import { deleteDocument } from '../../../lib/intakes/documents.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { deletedDocument, documentParams } from './schemas.ts';

export const documentsRemoveRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/intakes/{id}/documents/{docId}',
  options: {
    id: 'intakes.deleteDocument',
    description: 'Delete an intake document',
    notes: 'As retention would: its keys are destroyed at once, its blobs removed, and its route answers 410 after.',
    tags: ['api', 'intakes'],
    plugins: {
      valise: {
        scope: 'intake:write',
        audit: { action: 'intake.document_delete', resourceType: 'intake_document' },
        // A document deleted already: 410 `not_found`.
        openapi: { errors: [410] },
      },
    },
    validate: { params: documentParams },
    response: { schema: deletedDocument },
  },
  handler: (request) =>
    deleteDocument(request.server.app.services, callerOf(request), request.params.id, request.params.docId),
});
