import { invitationRecordOwner, memberUpload } from '../../../lib/coffres/access.ts';
import { defineRoute } from '../../route.ts';
import { createdItem, invitationParams, newItem } from './schemas.ts';

export const accessUploadRoute = defineRoute({
  method: 'POST',
  path: '/v1/coffre-access/{token}/items',
  options: {
    id: 'coffres.memberUpload',
    auth: false,
    description: 'Add an item to a vault (invitation link)',
    notes:
      'Needs `upload` access (else 403 `forbidden`). Answers the item and its `upload_url`, used as for transfer ' +
      'files. Logged as `uploaded` once the last byte is stored, with `coffre.item_uploaded`.',
    tags: ['api', 'coffres'],
    plugins: {
      valise: {
        openapi: { errors: [403, 410] },
        // A retried declaration gets its item back, not a second one.
        idempotencyOwner: (request) =>
          invitationRecordOwner(request.server.app.services, (request.params as { token: string }).token),
      },
    },
    validate: { params: invitationParams, payload: newItem.label('MemberCoffreItem') },
    response: { status: { 201: createdItem } },
  },
  handler: async (request, h) =>
    h.response(await memberUpload(request.server.app.services, request.params.token, request.payload)).code(201),
});
