import { startMemberArchive } from '../../../lib/coffres/archive.ts';
import { clientIp } from '../../client-ip.ts';
import { defineRoute } from '../../route.ts';
import { archiveTokenParams } from '../shares/archive.ts';
import { archiveResponse, holdDownloadSlot, limitDuration, streamedDownload } from '../shares/download.ts';

export const archiveDownloadRoute = defineRoute({
  method: 'GET',
  path: '/v1/coffre-archives/{token}',
  options: {
    id: 'coffres.openArchive',
    plugins: { valise: { openapi: { errors: [403, 410], binary: [200] } } },
    auth: false,
    description: 'Download vault items as one ZIP',
    notes:
      'The `archive_url` of `POST /v1/coffre-access/{token}/archive-link`: valid 300 seconds, then 403. Streams the ' +
      'ZIP with `Content-Length`; no Range (ask for a new link to start again). Refused (403) once the member is ' +
      'revoked or loses download access; items deleted since are left out. Each item is logged as `downloaded`.',
    tags: ['api', 'coffres'],
    validate: { params: archiveTokenParams },
    ...streamedDownload,
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const ip = clientIp(request, services.config);
    const { coffre, archive } = await startMemberArchive(services, request.params.token, ip);
    try {
      // The same bounds as every public download: a slot per address and per vault.
      holdDownloadSlot(request, { id: coffre.id, kind: 'vault' });
    } catch (error) {
      archive.zip.stream.destroy();
      throw error;
    }
    limitDuration(request, services.config.transfers.downloads);
    return archiveResponse(h, archive);
  },
});
