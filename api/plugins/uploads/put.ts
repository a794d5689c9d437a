import type { Readable } from 'node:stream';
import Joi from 'joi';
import { resolveUpload } from '../../../lib/uploads/resolve.ts';
import { parseContentRange } from '../../http/ranges.ts';
import { defineRoute, type NoInput } from '../../route.ts';
import { headerOf } from '../../types.ts';
import { receiveBody } from './receive-body.ts';
import { uploadToken } from './schemas.ts';

export const putRoute = defineRoute<{ token: string }, NoInput, Readable>({
  method: 'PUT',
  path: '/v1/uploads/{token}',
  options: {
    id: 'uploads.put',
    plugins: { valise: { openapi: { errors: [408, 409, 410] } } },
    auth: false,
    description: 'Upload one file',
    notes:
      'The body is the file, streamed. To resume, send `Content-Range: bytes <offset>-<size-1>/<size>` with the rest, where offset is the `Upload-Offset` a HEAD returns. A client that cannot stream may send chunks that end at a multiple of `part_size`; each is committed. A client that sends nothing for `UPLOAD_IDLE_TIMEOUT` (60 s), or is still sending after `UPLOAD_REQUEST_TIMEOUT` (6 h), is disconnected; its committed parts stay, so it resumes. Past `UPLOADS_PER_IP` uploads at once from one address, `UPLOADS_PER_KEY` for one transfer, vault or publishable key, or `UPLOADS_MAX` in all: 429 `rate_limited` with `Retry-After` and `reason`.',
    tags: ['api', 'uploads'],
    payload: {
      output: 'stream',
      parse: false,
      maxBytes: Number.MAX_SAFE_INTEGER,
      // Not hapi's timeouts: receiveUpload ends a body that stalls (UPLOAD_IDLE_TIMEOUT, not
      // counting the time spent storing parts) or runs too long (UPLOAD_REQUEST_TIMEOUT).
      timeout: false,
      allow: ['application/octet-stream', 'binary/octet-stream', 'application/json'],
    },
    timeout: { socket: false },
    validate: { params: Joi.object<{ token: string }>({ token: uploadToken.required() }) },
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const target = await resolveUpload(services, request.params.token);
    const contentRange = headerOf(request, 'content-range');
    const contentLength = headerOf(request, 'content-length');
    const chunk = {
      range: contentRange === undefined ? undefined : parseContentRange(contentRange),
      length: contentLength === undefined ? undefined : Number(contentLength),
    };
    const result = await receiveBody(request, target, request.payload, chunk);
    return h.response(result).header('Upload-Offset', String(result.upload_offset));
  },
});
