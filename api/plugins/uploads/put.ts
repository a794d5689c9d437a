import type { Readable } from 'node:stream';
import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { receiveUpload, resolveUpload } from '../../../lib/transfers/upload.ts';
import { headerOf } from '../../types.ts';
import { uploadToken } from './schemas.ts';

export const putRoute: ServerRoute = {
  method: 'PUT',
  path: '/v1/uploads/{token}',
  options: {
    auth: false,
    description: 'Upload one file',
    notes:
      'The body is the file, streamed. To resume, send `Content-Range: bytes <offset>-<size-1>/<size>` with the rest, where offset is the `Upload-Offset` a HEAD returns. A client that cannot stream may send chunks that end at a multiple of `part_size`; each is committed.',
    tags: ['api', 'uploads'],
    payload: {
      output: 'stream',
      parse: false,
      maxBytes: Number.MAX_SAFE_INTEGER,
      // A large file takes as long as it takes; the size checks end bad uploads.
      timeout: false,
      allow: ['application/octet-stream', 'binary/octet-stream', 'application/json'],
    },
    timeout: { socket: false },
    validate: { params: Joi.object({ token: uploadToken.required() }) },
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const target = await resolveUpload(services, (request.params as { token: string }).token);
    const result = await receiveUpload(services, target, request.payload as Readable, {
      contentRange: headerOf(request, 'content-range'),
      contentLength: headerOf(request, 'content-length'),
    });
    return h.response(result).header('Upload-Offset', String(result.upload_offset));
  },
};
