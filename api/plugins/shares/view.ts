import type { ServerRoute } from '@hapi/hapi';
import { findShared, presentShared } from '../../../lib/transfers/share.ts';
import { codeParams, sharedTransfer } from './schemas.ts';

export const viewRoute: ServerRoute = {
  method: 'GET',
  path: '/v1/shares/{code}',
  options: {
    auth: false,
    description: 'A shared transfer as its recipient sees it',
    notes: '`available` and `blocked_reason` say whether it can be downloaded now, and why not.',
    tags: ['api', 'shares'],
    response: { schema: sharedTransfer },
    validate: { params: codeParams },
  },
  handler: async (request) => {
    const { transfer, files } = await findShared(
      request.server.app.services,
      (request.params as { code: string }).code,
    );
    return presentShared(transfer, files);
  },
};
