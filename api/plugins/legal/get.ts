import Joi from 'joi';
import { getLegalDocument } from '../../../lib/legal/service.ts';
import { defineRoute } from '../../route.ts';
import { legalDocument, slug } from './schemas.ts';

export const getRoute = defineRoute({
  method: 'GET',
  path: '/v1/legal/documents/{slug}',
  options: {
    id: 'legal.document',
    description: 'Fetch a legal document',
    notes: 'Any valid key. The current version of the document, with its body.',
    tags: ['api', 'legal'],
    validate: { params: Joi.object<{ slug: string }>({ slug: slug.required() }) },
    response: { schema: legalDocument },
  },
  handler: (request) => getLegalDocument(request.server.app.services, request.params.slug),
});
