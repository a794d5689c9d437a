import Joi from 'joi';
import { fileIntoFolder, removeFromFolder } from '../../../lib/transfers/manage.ts';
import { defineRoute } from '../../route.ts';
import { id, idParams } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { folderLink } from './schemas.ts';

export const putFolderRoute = defineRoute({
  method: 'PUT',
  path: '/v1/transfers/{id}/folder',
  options: {
    id: 'transfers.setFolder',
    description: 'File a transfer into a folder',
    tags: ['api', 'transfers', 'folders'],
    plugins: { valise: { scope: 'folders:manage', audit: { action: 'transfer.file', resourceType: 'transfer' } } },
    validate: {
      params: idParams,
      payload: Joi.object<{ folder_id: string }>({ folder_id: id.required() }).label('FileIntoFolder'),
    },
    response: { schema: folderLink },
  },
  handler: (request) =>
    fileIntoFolder(request.server.app.services, callerOf(request), request.params.id, request.payload.folder_id),
});

export const deleteFolderRoute = defineRoute({
  method: 'DELETE',
  path: '/v1/transfers/{id}/folder',
  options: {
    id: 'transfers.removeFolder',
    description: 'Take a transfer out of its folder',
    notes: 'Idempotent: `folder_id` is null afterwards, whatever it was. The transfer and the folder are kept.',
    tags: ['api', 'transfers', 'folders'],
    plugins: { valise: { scope: 'folders:manage', audit: { action: 'transfer.unfile', resourceType: 'transfer' } } },
    validate: { params: idParams },
    response: { schema: folderLink },
  },
  handler: (request) => removeFromFolder(request.server.app.services, callerOf(request), request.params.id),
});
