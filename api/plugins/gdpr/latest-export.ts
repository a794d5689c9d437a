import Joi from 'joi';
import { latestGdprExport } from '../../../lib/gdpr/exports.ts';
import { defineRoute, type NoInput } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { gdprExport } from './schemas.ts';

export const latestExportRoute = defineRoute({
  method: 'GET',
  path: '/v1/gdpr/export',
  options: {
    id: 'gdpr.latestExport',
    description: 'Fetch the latest GDPR export',
    notes:
      'Scope `gdpr:export`. The environment\u2019s most recent export, as `GET /v1/gdpr/exports/{id}`; 404 when none.',
    tags: ['api', 'gdpr'],
    plugins: { valise: { scope: 'gdpr:export', openapi: { errors: [404] } } },
    validate: { query: Joi.object<NoInput>({}) },
    response: { schema: gdprExport },
  },
  handler: (request) => latestGdprExport(request.server.app.services, callerOf(request)),
});
