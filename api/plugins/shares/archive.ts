import Joi from 'joi';
import { openArchiveLink } from '../../../lib/zip/archives.ts';
import { clientIp } from '../../client-ip.ts';
import { defineRoute } from '../../route.ts';
import { headerOf } from '../../types.ts';
import { archiveResponse, holdDownloadSlot, limitDuration, streamedDownload } from './download.ts';

/** An archive link's token: its list of transfers (or vault items) makes it longer than a file's. */
export const archiveTokenParams = Joi.object<{ token: string }>({
  token: Joi.string()
    .max(8192)
    .pattern(/^[\w-]+\.[\w-]+$/, 'token')
    .required(),
});

export const archiveRoute = defineRoute({
  method: 'GET',
  path: '/v1/archives/{token}',
  options: {
    id: 'shares.openArchive',
    plugins: { valise: { openapi: { errors: [403, 410], binary: [200] } } },
    auth: false,
    description: 'Download every file of a share as one ZIP',
    notes:
      "Streams the ZIP of an archive link (`POST /v1/shares/{code}/archive-link`, `POST /v1/shared-collections/{code}/archive-link`) with `Content-Length`; no Range. One request at a time; spent once the whole archive has been sent (a broken download may start again, up to twice the archive's size in all). The download limits and timeouts of `GET /v1/downloads/{token}` apply.",
    tags: ['api', 'shares'],
    validate: { params: archiveTokenParams },
    ...streamedDownload,
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const target = await openArchiveLink(services, request.params.token, {
      ip: clientIp(request, services.config),
      userAgent: headerOf(request, 'user-agent') ?? null,
    });
    try {
      holdDownloadSlot(request, { id: target.subjectId, kind: target.kind });
    } catch (error) {
      target.archive.zip.stream.destroy();
      await target.settle(0, false);
      throw error;
    }
    limitDuration(request, services.config.transfers.downloads);
    const res = request.raw.res;
    res.once('close', () =>
      target
        .settle(target.archive.zip.produced(), res.writableFinished)
        .catch((error: Error) => request.log(['error', 'archives'], error.stack ?? error.message)),
    );
    return archiveResponse(h, target.archive);
  },
});
