import Joi from 'joi';
import { issueCollectionArchiveLink } from '../../../lib/zip/archives.ts';
import { clientIp } from '../../client-ip.ts';
import { defineRoute, orNull } from '../../route.ts';
import { text } from '../../schemas.ts';
import { headerOf } from '../../types.ts';
import { archiveLink } from '../shares/schemas.ts';
import { shareCodeParams } from './schemas.ts';

type CollectionArchiveInput = { passwords?: Record<string, string> };

export const sharedArchiveLinkRoute = defineRoute({
  method: 'POST',
  path: '/v1/shared-collections/{code}/archive-link',
  options: {
    id: 'collections.sharedArchiveLink',
    plugins: { valise: { openapi: { errors: [403, 422] } } },
    auth: false,
    description: 'Get one link that downloads a shared collection as a ZIP',
    notes:
      'A ZIP with a folder per transfer, of every transfer a visitor may download now: the open ones, and the password-protected ones whose password is in `passwords` (by transfer id). End-to-end transfers are left out (their key is only in their own link). Each transfer included counts one download, through its own machinery as `POST /v1/shared-collections/{code}/download-links` does. Returns a link to `GET /v1/archives/{token}`, valid 300 seconds. 403 `forbidden` with `reason` `nothing_to_archive` when no transfer qualifies; at most 100 transfers (422).',
    tags: ['api', 'collections'],
    response: { schema: archiveLink },
    validate: {
      params: shareCodeParams,
      payload: orNull(
        Joi.object<CollectionArchiveInput>({
          passwords: Joi.object().pattern(Joi.string().max(64), text.max(256)).max(100),
        }),
      ).label('CollectionArchiveRequest'),
    },
  },
  handler: (request) => {
    const { services } = request.server.app;
    return issueCollectionArchiveLink(services, request.params.code, request.payload ?? {}, {
      ip: clientIp(request, services.config),
      userAgent: headerOf(request, 'user-agent') ?? null,
    });
  },
});
