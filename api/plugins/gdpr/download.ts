import { downloadGdprExport } from '../../../lib/gdpr/exports.ts';
import { defineRoute } from '../../route.ts';
import { DOWNLOAD_SAFETY_HEADERS, linkTokenParams } from '../shares/download.ts';

export const downloadExportRoute = defineRoute({
  method: 'GET',
  path: '/v1/gdpr/export-downloads/{token}',
  options: {
    id: 'gdpr.download',
    auth: false,
    description: 'Download a GDPR export',
    notes:
      'The `download_url` of a completed export: valid 300 seconds, then 403; 410 once the export expired. ' +
      'The JSON document, decrypted.',
    tags: ['api', 'gdpr'],
    plugins: { valise: { openapi: { errors: [403, 410], binary: [200] } } },
    validate: { params: linkTokenParams },
  },
  handler: async (request, h) => {
    const { id, content } = await downloadGdprExport(request.server.app.services, request.params.token);
    const response = h
      .response(content)
      .type('application/json')
      .header('Content-Disposition', `attachment; filename="valise-gdpr-export-${id}.json"`)
      .header('Cache-Control', 'no-store');
    for (const [name, value] of Object.entries(DOWNLOAD_SAFETY_HEADERS)) response.header(name, value);
    return response;
  },
});
