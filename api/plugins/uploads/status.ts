import Joi from 'joi';
import { uploadOffset } from '../../../lib/uploads/receive.ts';
import { resolveUpload } from '../../../lib/uploads/resolve.ts';
import { defineRoute } from '../../route.ts';
import { uploadStatus, uploadToken } from './schemas.ts';

export const statusRoute = defineRoute({
  method: 'GET',
  path: '/v1/uploads/{token}',
  options: {
    id: 'uploads.status',
    plugins: { valise: { openapi: { errors: [410] } } },
    auth: false,
    description: 'How much of a file is stored',
    notes: 'HEAD works too. `Upload-Offset` is the byte to resume from with `PUT` and `Content-Range`.',
    tags: ['api', 'uploads'],
    response: { schema: uploadStatus },
    validate: { params: Joi.object<{ token: string }>({ token: uploadToken.required() }) },
  },
  handler: async (request, h) => {
    const { file, present } = await resolveUpload(request.server.app.services, request.params.token);
    const offset = uploadOffset(file);
    return h
      .response({ ...present(file), upload_offset: offset })
      .header('Upload-Offset', String(offset))
      .header('Upload-Length', String(file.size))
      .header('Cache-Control', 'no-store');
  },
});
