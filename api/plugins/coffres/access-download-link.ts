import { memberDownloadLink } from '../../../lib/coffres/access.ts';
import { defineRoute } from '../../route.ts';
import { memberDownloadLink as downloadLinkSchema, invitationItemParams } from './schemas.ts';

export const accessDownloadLinkRoute = defineRoute({
  method: 'POST',
  path: '/v1/coffre-access/{token}/items/{itemId}/download-link',
  options: {
    id: 'coffres.memberDownloadLink',
    auth: false,
    description: 'A download link for one vault item (invitation link)',
    notes:
      'Needs `download` or `upload` access: `view` is 403 `forbidden`. The link is valid 300 s, streams the decrypted ' +
      'file with Range support, and is checked again (and logged as `downloaded`) when it is used.',
    tags: ['api', 'coffres'],
    plugins: { valise: { openapi: { errors: [403, 409, 410] } } },
    validate: { params: invitationItemParams },
    response: { schema: downloadLinkSchema },
  },
  handler: (request) => memberDownloadLink(request.server.app.services, request.params.token, request.params.itemId),
});
