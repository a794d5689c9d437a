import Joi from 'joi';
import { type ListDocumentsInput, listDocuments } from '../../../lib/intakes/documents.ts';
import { INTAKE_DOCUMENT_STATUSES } from '../../../lib/intakes/vocabulary.ts';
import { defineRoute } from '../../route.ts';
import { pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { intakeDocumentList, intakeParams } from './schemas.ts';

export const documentsListRoute = defineRoute({
  method: 'GET',
  path: '/v1/intakes/{id}/documents',
  options: {
    id: 'intakes.listDocuments',
    description: 'List an intake\u2019s documents',
    notes: 'Newest first, deleted ones included (with their status). Each downloadable file has a fresh URL.',
    tags: ['api', 'intakes'],
    plugins: { valise: { scope: 'intake:read' } },
    validate: {
      params: intakeParams,
      query: Joi.object<ListDocumentsInput>({
        ...pageQuery(),
        status: Joi.string().valid(...INTAKE_DOCUMENT_STATUSES),
      }),
    },
    response: { schema: intakeDocumentList },
  },
  handler: (request) => listDocuments(request.server.app.services, callerOf(request), request.params.id, request.query),
});
