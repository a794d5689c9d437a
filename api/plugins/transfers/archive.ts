import { ownerArchive } from '../../../lib/zip/archives.ts';
import { defineRoute } from '../../route.ts';
import { idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { archiveResponse, limitDuration, streamedDownload } from '../shares/download.ts';

export const archiveRoute = defineRoute({
  method: 'GET',
  path: '/v1/transfers/{id}/archive',
  options: {
    id: 'transfers.archive',
    description: 'Download every file of a transfer as one ZIP',
    notes:
      "Streams a ZIP of the transfer's files (STORE, ZIP64 past 4 GiB) with `Content-Length`, decrypted on the way. Counts no download. Server-mode transfers only: an end-to-end one is 409 `validation_error` with `reason` `end_to_end` (the server cannot read it; build the archive on the client, as the SDK and the share page do). Recorded in the audit log.",
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
    const archive = await ownerArchive(services, callerOf(request), request.params.id);
    limitDuration(request, services.config.transfers.downloads);
    return archiveResponse(h, archive);
  },
});
