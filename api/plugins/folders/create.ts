import Joi from 'joi';
import { createFolder } from '../../../lib/transfers/folders.ts';
import { defineRoute } from '../../route.ts';
import { titleText } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { folder } from './schemas.ts';

export const createRoute = defineRoute({
  method: 'POST',
  path: '/v1/folders',
  options: {
    id: 'folders.create',
    description: 'Create a folder for transfers',
    tags: ['api', 'folders'],
    plugins: { valise: { scope: 'folders:manage', audit: { action: 'folder.create', resourceType: 'folder' } } },
    validate: {
      payload: Joi.object<{ name: string }>({ name: titleText.min(1).max(200).required() }).label('CreateFolder'),
    },
    response: { status: { 201: folder } },
  },
  handler: async (request, h) => {
    const { name } = request.payload;
    return h.response(await createFolder(request.server.app.services, callerOf(request), name)).code(201);
  },
});
