import type { Plugin, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { createFolder, listFolders } from '../../../lib/transfers/folders.ts';
import { id, listEnvelope, pageQuery, text, timestamp } from '../../schemas.ts';
import { callerOf } from '../../types.ts';

const folder = Joi.object({
  id: id.required(),
  object: Joi.string().valid('folder').required(),
  name: Joi.string().required(),
  transfer_count: Joi.number().integer().required(),
  created_at: timestamp.required(),
}).label('Folder');

const createRoute: ServerRoute = {
  method: 'POST',
  path: '/v1/folders',
  options: {
    description: 'Create a folder for transfers',
    tags: ['api', 'folders'],
    plugins: { valise: { scope: 'folders:manage', audit: { action: 'folder.create', resourceType: 'folder' } } },
    validate: { payload: Joi.object({ name: text.trim().min(1).max(200).required() }).label('CreateFolder') },
    response: { status: { 201: folder } },
  },
  handler: async (request, h) => {
    const created = await createFolder(
      request.server.app.services,
      callerOf(request),
      (request.payload as { name: string }).name,
    );
    return h.response(created).code(201);
  },
};

const listRoute: ServerRoute = {
  method: 'GET',
  path: '/v1/folders',
  options: {
    description: 'List folders',
    tags: ['api', 'folders'],
    plugins: { valise: { scope: 'transfers:read' } },
    validate: { query: Joi.object(pageQuery()) },
    response: { schema: listEnvelope(folder, 'FolderList') },
  },
  handler: (request) => listFolders(request.server.app.services, callerOf(request), request.query as never),
};

export const foldersPlugin: Plugin<void> = {
  name: 'valise-folders',
  register(server) {
    server.route([createRoute, listRoute]);
  },
};
