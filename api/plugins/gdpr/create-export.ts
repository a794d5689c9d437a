import Joi from 'joi';
import { type RequestExportInput, requestGdprExport } from '../../../lib/gdpr/exports.ts';
import { defineRoute, orNull } from '../../route.ts';
import { id } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { gdprExport } from './schemas.ts';

export const createExportRoute = defineRoute({
  method: 'POST',
  path: '/v1/gdpr/exports',
  options: {
    id: 'gdpr.createExport',
    description: 'Request a GDPR export',
    notes:
      'Scope `gdpr:export`. Collects what Valise holds about the workspace (the key\u2019s environment) or, with ' +
      '`user_id`, about one of its users: JSON, file names and sizes but no file content. Answers 202 `queued`; ' +
      '`GET /v1/gdpr/exports/{id}` then shows its progress and, once `completed`, a `download_url` valid 300 seconds.',
    tags: ['api', 'gdpr'],
    plugins: {
      valise: {
        scope: 'gdpr:export',
        rateClass: 'write',
        audit: { action: 'gdpr.export_requested', resourceType: 'gdpr_export' },
        openapi: { errors: [404] },
      },
    },
    validate: {
      payload: orNull(Joi.object<RequestExportInput>({ user_id: id }).label('CreateGdprExport')),
    },
    response: { status: { 202: gdprExport } },
  },
  handler: async (request, h) =>
    h
      .response(await requestGdprExport(request.server.app.services, callerOf(request), request.payload ?? {}))
      .code(202),
});
