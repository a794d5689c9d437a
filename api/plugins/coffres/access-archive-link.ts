import Joi from 'joi';
import { MAX_ARCHIVE_ITEMS, memberArchiveLink } from '../../../lib/coffres/archive.ts';
import { defineRoute, orNull } from '../../route.ts';
import { archiveLink } from '../shares/schemas.ts';
import { invitationParams, itemId } from './schemas.ts';

export const accessArchiveLinkRoute = defineRoute({
  method: 'POST',
  path: '/v1/coffre-access/{token}/archive-link',
  options: {
    id: 'coffres.memberArchiveLink',
    auth: false,
    description: 'A link that downloads vault items as one ZIP (invitation link)',
    notes:
      'Needs `download` or `upload` access: `view` is 403 `forbidden`. `item_ids` chooses the items (at most ' +
      `${MAX_ARCHIVE_ITEMS}); without it, every item the member may download. The link is valid 300 s and streams ` +
      'a ZIP (STORE, ZIP64 past 4 GiB) with `Content-Length`; it is checked again when used, and each item in it is ' +
      'logged as `downloaded`.',
    tags: ['api', 'coffres'],
    plugins: { valise: { openapi: { errors: [403, 410] } } },
    validate: {
      params: invitationParams,
      payload: orNull(
        Joi.object<{ item_ids?: string[] }>({
          item_ids: Joi.array()
            .items(itemId)
            .min(1)
            .max(MAX_ARCHIVE_ITEMS)
            .unique()
            .description('The items to include'),
        }),
      ).label('CoffreArchiveLinkRequest'),
    },
    response: { schema: archiveLink },
  },
  handler: (request) =>
    memberArchiveLink(request.server.app.services, request.params.token, { item_ids: request.payload?.item_ids }),
});
