import type { Request } from '@hapi/hapi';
import Joi from 'joi';
import { type AcceptLegalInput, acceptLegalDocument } from '../../../lib/legal/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { legalAcceptance, slug, version } from './schemas.ts';

/** What the audit entry keeps of the request: the document and version accepted. */
function acceptedDocument(request: Request): Record<string, string> {
  const body = (request.payload ?? {}) as Record<string, unknown>;
  const kept: Record<string, string> = {};
  for (const name of ['slug', 'version'] as const) {
    if (typeof body[name] === 'string') kept[name] = body[name].slice(0, 100);
  }
  return kept;
}

export const acceptRoute = defineRoute({
  method: 'POST',
  path: '/v1/legal/acceptances',
  options: {
    id: 'legal.accept',
    description: 'Accept a legal document',
    notes:
      "Any valid key: the key's user accepts the current version of `slug`. Any other `version` is refused with " +
      '409 `validation_error` naming `current_version`. Recorded in the audit log as `legal.accepted` (metadata ' +
      '`slug`, `version`), in the key\u2019s environment, and as a `workspace.legal_accepted` event.',
    tags: ['api', 'legal'],
    plugins: {
      valise: {
        audit: { action: 'legal.accepted', resourceType: 'legal_document', metadata: acceptedDocument },
        openapi: { errors: [404, 409] },
      },
    },
    validate: {
      payload: Joi.object<AcceptLegalInput>({ slug: slug.required(), version: version.required() }).label(
        'AcceptLegalDocument',
      ),
    },
    response: { status: { 201: legalAcceptance } },
  },
  handler: async (request, h) =>
    h.response(await acceptLegalDocument(request.server.app.services, callerOf(request), request.payload)).code(201),
});
