import { issueArchiveLink } from '../../../lib/zip/archives.ts';
import { clientIp } from '../../client-ip.ts';
import { defineRoute } from '../../route.ts';
import { headerOf } from '../../types.ts';
import { archiveLink, codeParams, passwordOnly } from './schemas.ts';

export const archiveLinkRoute = defineRoute({
  method: 'POST',
  path: '/v1/shares/{code}/archive-link',
  options: {
    id: 'shares.archiveLink',
    plugins: { valise: { openapi: { errors: [403, 409, 410] } } },
    auth: false,
    description: 'Get one link that downloads every file of a shared transfer as a ZIP',
    notes:
      "The same gate as `POST /v1/shares/{code}/download-links` (password, state, approval, limits; one download counted), then a link to `GET /v1/archives/{token}`, valid 300 seconds, that streams a ZIP of every file (STORE, ZIP64 past 4 GiB) with its exact `size`. Through a recipient's personal link, the recipient's download counts once the archive has been sent whole. End-to-end transfers: 409 `validation_error` with `reason` `end_to_end` (the server cannot read them; the client builds the ZIP from the download links).",
    tags: ['api', 'shares'],
    response: { schema: archiveLink },
    validate: { params: codeParams, payload: passwordOnly },
  },
  handler: (request) => {
    const { services } = request.server.app;
    return issueArchiveLink(services, request.params.code, request.payload ?? {}, {
      ip: clientIp(request, services.config),
      userAgent: headerOf(request, 'user-agent') ?? null,
    });
  },
});
