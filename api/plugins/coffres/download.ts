import { startDownload } from '../../../lib/coffres/access.ts';
import { openItem } from '../../../lib/coffres/items.ts';
import { clientIp } from '../../client-ip.ts';
import { defineRoute } from '../../route.ts';
import {
  fileResponse,
  holdDownloadSlot,
  limitDuration,
  linkTokenParams,
  requestedRange,
  streamedDownload,
} from '../shares/download.ts';

export const downloadRoute = defineRoute({
  method: 'GET',
  path: '/v1/coffre-downloads/{token}',
  options: {
    id: 'coffres.openDownload',
    plugins: { valise: { openapi: { errors: [403, 410, 416], binary: [200, 206] } } },
    auth: false,
    description: 'Download a vault item',
    notes:
      'The `download_url` of a vault item: valid 300 seconds, then 403. Streams the decrypted file; supports a single ' +
      'HTTP Range. A member\u2019s link is refused (403) once they are revoked or lose download access. Each request ' +
      'is written to the vault\u2019s access log as `downloaded`. Stored content altered in storage: 410 `not_found` ' +
      'with `reason` `content_corrupt` before any byte, or the response is cut off before its end.',
    tags: ['api', 'coffres'],
    validate: { params: linkTokenParams },
    ...streamedDownload,
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const { coffre, item } = await startDownload(services, request.params.token, clientIp(request, services.config));
    const range = requestedRange(request, item.size);
    // The same bounds as public transfer downloads: a slot per address and per vault.
    holdDownloadSlot(request, { id: coffre.id, kind: 'vault' });
    const content = await openItem(services, item, range);
    limitDuration(request, services.config.transfers.downloads);
    return fileResponse(h, content, { size: item.size, range, name: item.name, mimeType: item.mime_type });
  },
});
