import { viewShared } from '../../../lib/transfers/share.ts';
import { defineRoute } from '../../route.ts';
import { codeParams, sharedTransfer } from './schemas.ts';

export const viewRoute = defineRoute({
  method: 'GET',
  path: '/v1/shares/{code}',
  options: {
    id: 'shares.get',
    plugins: { valise: { openapi: { errors: [403, 410] } } },
    auth: false,
    description: 'A shared transfer as its recipient sees it',
    notes:
      '`available` and `blocked_reason` say whether it can be downloaded now, and why not. Behind a password, `transfer_title` and `files` are null until POST /v1/shares/{code}/unlock. An ended transfer (expired, revoked, infected, upload incomplete) is 410 with `error.reason` and nothing else.',
    tags: ['api', 'shares'],
    response: { schema: sharedTransfer },
    validate: { params: codeParams },
  },
  handler: (request) => viewShared(request.server.app.services, request.params.code),
});
