import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { listFolders } from '../../../lib/transfers/folders.ts';
import { listEnvelope, pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { folder } from './schemas.ts';

export const listRoute: ServerRoute = {
  method: 'GET',
  path: '/v1/folders',
  options: {
    id: 'folders.list',
    description: 'List folders',
    tags: ['api', 'folders'],
    plugins: { valise: { scope: 'transfers:read' } },
    validate: { query: Joi.object(pageQuery()) },
    response: { schema: listEnvelope(folder, 'FolderList') },
  },
  handler: (request) => listFolders(request.server.app.services, callerOf(request), request.query as never),
};
