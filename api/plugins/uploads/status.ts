import Joi from 'joi';
import { partSize } from '../../../lib/uploads/parts.ts';
import { uploadInProgressNow, uploadOffset } from '../../../lib/uploads/receive.ts';
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
    notes:
      'HEAD works too. `Upload-Offset` is the byte to resume from with `PUT` and `Content-Range`. `upload_in_progress` says whether another request is sending the file now (a `PUT` would be answered 409): a client refused while still sending its body may see only a closed connection, since the 409 comes before the body is read.',
    tags: ['api', 'uploads'],
    response: { schema: uploadStatus },
    validate: { params: Joi.object<{ token: string }>({ token: uploadToken.required() }) },
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const target = await resolveUpload(services, request.params.token);
    const { file, present } = target;
    const offset = uploadOffset(file);
    const partBytes = partSize(file.size, services.config.transfers.uploads.maxParts);
    const inProgress = await uploadInProgressNow(services, target);
    return h
      .response({ ...present(file), upload_offset: offset, part_size: partBytes, upload_in_progress: inProgress })
      .header('Upload-Offset', String(offset))
      .header('Upload-Length', String(file.size))
      .header('Cache-Control', 'no-store');
  },
});
