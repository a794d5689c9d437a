import Joi from 'joi';
import type { PageQuery } from '../../../lib/pagination.ts';
import { listFolders } from '../../../lib/transfers/folders.ts';
import { defineRoute } from '../../route.ts';
import { listEnvelope, pageQuery } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { folder } from './schemas.ts';

export const listRoute = defineRoute({
  method: 'GET',
  path: '/v1/folders',
  options: {
    id: 'folders.list',
    description: 'List folders',
    tags: ['api', 'folders'],
    plugins: { valise: { scope: 'transfers:read' } },
    validate: { query: Joi.object<PageQuery>(pageQuery()) },
    response: { schema: listEnvelope(folder, 'FolderList') },
  },
  handler: (request) => listFolders(request.server.app.services, callerOf(request), request.query),
});
