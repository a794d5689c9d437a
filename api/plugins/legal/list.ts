import { listLegalDocuments } from '../../../lib/legal/service.ts';
import { defineRoute } from '../../route.ts';
import { legalDocumentList } from './schemas.ts';

export const listRoute = defineRoute({
  method: 'GET',
  path: '/v1/legal/documents',
  options: {
    id: 'legal.documents',
    description: 'List the published legal documents',
    notes:
      'Any valid key. The current version of each document Valise publishes (in French), without its body: ' +
      '`url` gives it. One page: `has_more` is always false.',
    tags: ['api', 'legal'],
    response: { schema: legalDocumentList },
  },
  handler: (request) => listLegalDocuments(request.server.app.services),
});
