import Joi from 'joi';
import { type DownloadLinksInput, issueDownloadLinks } from '../../../lib/transfers/download-links.ts';
import { clientIp } from '../../client-ip.ts';
import { defineRoute, orNull } from '../../route.ts';
import { id, text } from '../../schemas.ts';
import { headerOf } from '../../types.ts';
import { codeParams, downloadLinks } from './schemas.ts';

export const linksRoute = defineRoute({
  method: 'POST',
  path: '/v1/shares/{code}/download-links',
  options: {
    id: 'shares.downloadLinks',
    plugins: { valise: { openapi: { errors: [403, 410] } } },
    auth: false,
    description: 'Unlock a shared transfer and get download links',
    notes:
      'Counts one download of the transfer (against max_downloads) and returns a link per file (or for `file_id`), valid 300 seconds. Each link serves its file until its last byte has been sent once (resumable with Range in between). Password attempts are limited per link and client address, with a link-wide ceiling (429 `rate_limited` with Retry-After).',
    tags: ['api', 'shares'],
    response: { schema: downloadLinks },
    validate: {
      params: codeParams,
      payload: orNull(Joi.object<DownloadLinksInput>({ password: text.max(256), file_id: id })).label(
        'DownloadLinksRequest',
      ),
    },
  },
  handler: (request) => {
    const { services } = request.server.app;
    return issueDownloadLinks(services, request.params.code, request.payload ?? {}, {
      ip: clientIp(request, services.config),
      userAgent: headerOf(request, 'user-agent') ?? null,
    });
  },
});
