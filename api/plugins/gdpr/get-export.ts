import { getGdprExport } from '../../../lib/gdpr/exports.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { gdprExport } from './schemas.ts';

export const getExportRoute = defineRoute({
  method: 'GET',
  path: '/v1/gdpr/exports/{id}',
  options: {
    id: 'gdpr.getExport',
    description: 'Fetch a GDPR export',
    notes: 'Scope `gdpr:export`. Each call while `completed` mints a new `download_url`, valid 300 seconds.',
    tags: ['api', 'gdpr'],
    plugins: { valise: { scope: 'gdpr:export' } },
    validate: { params: idParams },
    response: { schema: gdprExport },
  },
  handler: (request) => getGdprExport(request.server.app.services, callerOf(request), request.params.id),
});
