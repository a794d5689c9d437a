import Joi from 'joi';
import { MAX_ARCHIVE_ITEMS, ownerCoffreArchive } from '../../../lib/coffres/archive.ts';
import { ITEM_ID_PATTERN } from '../../../lib/coffres/ids.ts';
import { clientIp } from '../../client-ip.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { archiveResponse, holdDownloadSlot, limitDuration, streamedDownload } from '../shares/download.ts';
import { coffreParams } from './schemas.ts';

const itemIdList = new RegExp(
  `^${ITEM_ID_PATTERN.source.slice(1, -1)}(,${ITEM_ID_PATTERN.source.slice(1, -1)}){0,${MAX_ARCHIVE_ITEMS - 1}}$`,
);

export const archiveRoute = defineRoute({
  method: 'GET',
  path: '/v1/coffres/{id}/archive',
  options: {
    id: 'coffres.archive',
    description: 'Download vault items as one ZIP',
    notes:
      'Streams a ZIP (STORE, ZIP64 past 4 GiB) of the items `item_ids` names (comma-separated, at most ' +
      `${MAX_ARCHIVE_ITEMS}), or of every available item, decrypted on the way, with \`Content-Length\`. Each item ` +
      "is written to the vault's access log as `downloaded` by the API key; the request is in the audit log. " +
      'Takes a download slot and has the timeouts of `GET /v1/downloads/{token}`: past `DOWNLOADS_PER_IP` at once ' +
      'from one address, `DOWNLOADS_PER_TRANSFER` of this vault or `DOWNLOADS_MAX` in all, 429 `rate_limited` with ' +
      '`Retry-After`.',
    tags: ['api', 'coffres'],
    plugins: {
      valise: {
        scope: 'coffres:read',
        audit: { action: 'coffre.archive_download', resourceType: 'coffre' },
        openapi: { errors: [403, 410], binary: [200] },
      },
    },
    validate: {
      params: coffreParams,
      query: Joi.object<{ item_ids?: string }>({
        item_ids: Joi.string().pattern(itemIdList, 'comma-separated item ids').description('`cofi_…,cofi_…`'),
      }),
    },
    ...streamedDownload,
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const itemIds = request.query.item_ids?.split(',');
    const ip = clientIp(request, services.config);
    // It reads through the public downloads' object-store pool, so it holds one of their slots.
    const { archive } = await ownerCoffreArchive(services, callerOf(request), request.params.id, itemIds, ip, (id) =>
      holdDownloadSlot(request, { id, kind: 'vault' }),
    );
    limitDuration(request, services.config.transfers.downloads);
    return archiveResponse(h, archive);
  },
});
