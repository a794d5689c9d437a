import Joi from 'joi';
import { partSize } from '../../../lib/uploads/parts.ts';
import { uploadOffset, uploadStateNow } from '../../../lib/uploads/receive.ts';
import { resolveStoredUpload } from '../../../lib/uploads/resolve.ts';
import { defineRoute } from '../../route.ts';
import { uploadStatus, uploadToken } from './schemas.ts';
import { TUS_HEADER_DOCS, TUS_RESUMABLE_HEADER, TUS_SDK_EXCLUSION } from './tus-headers-docs.ts';
import { checkTusRequest, fileHeaders, TUS_ROUTE_EXT, withHeaders } from './tus-protocol.ts';

export const statusRoute = defineRoute({
  method: 'GET',
  path: '/v1/uploads/{token}',
  options: {
    id: 'uploads.status',
    plugins: {
      valise: {
        openapi: {
          errors: [410, 412],
          requestHeaders: {
            'Tus-Resumable': {
              ...TUS_RESUMABLE_HEADER,
              required: false,
              description: "A tus client's HEAD: `1.0.0` (412 otherwise).",
            },
          },
          head: {
            id: 'uploads.tusHead',
            summary: 'Where an upload stands (tus HEAD)',
            description:
              "tus 1.0.0 core (docs/tus.md): the GET's headers without its body. `Upload-Offset` is the byte to resume from with `PATCH` (or `PUT` and `Content-Range`); `Upload-Length` the file's size; `Upload-Expires` when its upload URL ends; `Upload-Metadata` the file's name and type as tus metadata. With `Tus-Resumable`, it must be `1.0.0` (412 otherwise). `Cache-Control: no-store`.",
            sdk: TUS_SDK_EXCLUSION,
          },
          responseHeaders: {
            200: {
              'Upload-Offset': TUS_HEADER_DOCS['Upload-Offset'],
              'Upload-Length': TUS_HEADER_DOCS['Upload-Length'],
              'Upload-Expires': TUS_HEADER_DOCS['Upload-Expires'],
              'Upload-Metadata': TUS_HEADER_DOCS['Upload-Metadata'],
              'Tus-Resumable': TUS_HEADER_DOCS['Tus-Resumable'],
            },
          },
        },
      },
    },
    auth: false,
    description: 'How much of a file is stored',
    notes:
      "HEAD works too, and is tus's HEAD (docs/tus.md): `Upload-Offset`, `Upload-Length`, `Upload-Expires`, `Upload-Metadata`, `Tus-Resumable`. `Upload-Offset` is the byte to resume from with `PUT` and `Content-Range`. `upload_in_progress` says whether another request is sending the file now (a `PUT` would be answered 409): a client refused while still sending its body may see only a closed connection, since the 409 comes before the body is read.",
    tags: ['api', 'uploads'],
    response: { schema: uploadStatus },
    ext: TUS_ROUTE_EXT,
    validate: { params: Joi.object<{ token: string }>({ token: uploadToken.required() }) },
  },
  handler: async (request, h) => {
    // A HEAD is also tus's: one that says Tus-Resumable must say ours.
    checkTusRequest(request, false);
    const { services } = request.server.app;
    const target = await resolveStoredUpload(services, request.params.token);
    const { file, inProgress } = await uploadStateNow(services, target);
    const { present } = target;
    const offset = uploadOffset(file);
    const partBytes = partSize(file.size, services.config.transfers.uploads.maxParts);
    const response = h.response({
      ...present(file),
      upload_offset: offset,
      part_size: partBytes,
      upload_in_progress: inProgress,
    });
    return withHeaders(response, {
      ...fileHeaders(target),
      'Upload-Offset': String(offset),
      'Cache-Control': 'no-store',
    });
  },
});
