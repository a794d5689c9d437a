import Joi from 'joi';
import { partSize } from '../../../lib/uploads/parts.ts';
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
    const { services } = request.server.app;
    const { file, present } = await resolveUpload(services, request.params.token);
    const offset = uploadOffset(file);
    const partBytes = partSize(file.size, services.config.transfers.uploads.maxParts);
    return h
      .response({ ...present(file), upload_offset: offset, part_size: partBytes })
      .header('Upload-Offset', String(offset))
      .header('Upload-Length', String(file.size))
      .header('Cache-Control', 'no-store');
  },
});
