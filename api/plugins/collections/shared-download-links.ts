import Joi from 'joi';
import { type CollectionDownloadLinksInput, issueCollectionDownloadLinks } from '../../../lib/collections/shared.ts';
import { clientIp } from '../../client-ip.ts';
import { defineRoute } from '../../route.ts';
import { id, text } from '../../schemas.ts';
import { headerOf } from '../../types.ts';
import { downloadLinks } from '../shares/schemas.ts';
import { shareCodeParams } from './schemas.ts';

export const sharedLinksRoute = defineRoute({
  method: 'POST',
  path: '/v1/shared-collections/{code}/download-links',
  options: {
    id: 'collections.sharedDownloadLinks',
    plugins: { valise: { openapi: { errors: [403, 410] } } },
    auth: false,
    description: 'Download links for one transfer of a shared collection',
    notes:
      "Runs the transfer's own download machinery, as `POST /v1/shares/{code}/download-links` does: its `password` is checked (attempts limited the same way), one download is counted against its `max_downloads`, and a link per file (or for `file_id`) is returned, valid 300 seconds. 403 `forbidden` with `reason` `end_to_end` for an end-to-end transfer.",
    tags: ['api', 'collections'],
    response: { schema: downloadLinks },
    validate: {
      params: shareCodeParams,
      payload: Joi.object<CollectionDownloadLinksInput>({
        transfer_id: id.required(),
        file_id: id,
        password: text.max(256),
      }).label('CollectionDownloadLinksRequest'),
    },
  },
  handler: (request) => {
    const { services } = request.server.app;
    return issueCollectionDownloadLinks(services, request.params.code, request.payload, {
      ip: clientIp(request, services.config),
      userAgent: headerOf(request, 'user-agent') ?? null,
    });
  },
});
