import { ownerArchive } from '../../../lib/zip/archives.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { archiveResponse, holdDownloadSlot, limitDuration, streamedDownload } from '../shares/download.ts';

export const archiveRoute = defineRoute({
  method: 'GET',
  path: '/v1/transfers/{id}/archive',
  options: {
    id: 'transfers.archive',
    description: 'Download every file of a transfer as one ZIP',
    notes:
      "Streams a ZIP of the transfer's files (STORE, ZIP64 past 4 GiB) with `Content-Length`, decrypted on the way. Counts no download. Takes a download slot and has the timeouts of `GET /v1/downloads/{token}`: past `DOWNLOADS_PER_IP` archives and downloads at once from one address, `DOWNLOADS_PER_TRANSFER` of this transfer or `DOWNLOADS_MAX` in all, 429 `rate_limited` with `Retry-After`. Server-mode transfers only: an end-to-end one is 409 `validation_error` with `reason` `end_to_end` (the server cannot read it; build the archive on the client, as the SDK and the share page do). Recorded in the audit log.",
    tags: ['api', 'transfers'],
    plugins: {
      valise: {
        scope: 'transfers:read',
        audit: { action: 'transfer.archive_download', resourceType: 'transfer' },
        openapi: { errors: [403, 409, 410], binary: [200] },
      },
    },
    validate: { params: idParams },
    ...streamedDownload,
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    // It reads through the public downloads' object-store pool, so it holds one of their slots.
    const archive = await ownerArchive(services, callerOf(request), request.params.id, (id) =>
      holdDownloadSlot(request, { id, kind: 'transfer' }),
    );
    limitDuration(request, services.config.transfers.downloads);
    return archiveResponse(h, archive);
  },
});
