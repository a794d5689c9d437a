import type { Readable } from 'node:stream';
import Joi from 'joi';
import { partSize } from '../../../lib/uploads/parts.ts';
import { resolveStoredUpload, resolveTusUpload } from '../../../lib/uploads/resolve.ts';
import { byteCountHeader, parseUploadChecksum, TUS_CONTENT_TYPE } from '../../../lib/uploads/tus.ts';
import { tusChunk } from '../../../lib/uploads/tus-chunk.ts';
import { defineRoute, type NoInput } from '../../route.ts';
import { headerOf } from '../../types.ts';
import { checkedBeforeTheBody, receiveBody } from './receive-body.ts';
import { noBody, uploadToken } from './schemas.ts';
import { TUS_HEADER_DOCS, TUS_RESUMABLE_HEADER, TUS_SDK_EXCLUSION } from './tus-headers-docs.ts';
import { checkTusRequest, fileHeaders, TUS_ROUTE_EXT, withHeaders } from './tus-protocol.ts';

export const tusPatchRoute = defineRoute<{ token: string }, NoInput, Readable>({
  method: 'PATCH',
  path: '/v1/uploads/{token}',
  options: {
    id: 'uploads.tusPatch',
    plugins: {
      valise: {
        // Not the per-address request budget (RATE_LIMIT_PUBLIC a minute): a client sending 8 MiB
        // chunks at 20 MB/s spends it in under a minute, and tus clients do not retry a 429. What
        // bounds PATCHes is what bounds a PUT: the signed token, checked before any lookup, and the
        // upload slots each one takes before its body is read (429 with Retry-After past them).
        rateLimited: false,
        openapi: {
          errors: [408, 409, 410, 412, 413, 415, 429, 460],
          statuses: {
            204: "The bytes are received up to the answered `Upload-Offset`; the file's last chunk is answered once the file is stored whole.",
          },
          requestHeaders: {
            'Tus-Resumable': TUS_RESUMABLE_HEADER,
            'Upload-Offset': {
              description: 'Where the body starts in the file: the stored offset (HEAD), or 0 to start again.',
              required: true,
              schema: { type: 'integer', minimum: 0 },
            },
            'Upload-Checksum': {
              description:
                '`<algorithm> <base64 digest>` of the body (sha256, sha512, sha1, md5): checked before any of it is committed; 460 when it differs.',
              schema: { type: 'string' },
            },
          },
          responseHeaders: {
            204: {
              'Tus-Resumable': TUS_HEADER_DOCS['Tus-Resumable'],
              'Upload-Offset': TUS_HEADER_DOCS['Upload-Offset'],
              'Upload-Expires': TUS_HEADER_DOCS['Upload-Expires'],
            },
          },
        },
        sdk: TUS_SDK_EXCLUSION,
      },
    },
    auth: false,
    description: 'Upload bytes of a file (tus)',
    notes:
      "tus 1.0.0 core (docs/tus.md): the body (`Content-Type: application/offset+octet-stream`) is the file from `Upload-Offset` on, encrypted and stored as a PUT's. The answer's `Upload-Offset` is where the body's kept bytes end (a chunk that does not end the file is answered once received, its parts stored behind the answer: docs/tus.md, \"Speed\"; should they fail, the next PATCH is refused with 409 and HEAD says where to resume): offsets move by whole parts (`part_size`), so bytes past the last part boundary the body reaches are dropped and sent again by the client from there. A body that reaches neither a part boundary nor the end is refused (400): use chunks of a multiple of `part_size`. An interrupted PATCH keeps its committed parts: HEAD says where to resume. With `Upload-Checksum`, nothing of the body is committed unless it matches (460). Same bounds as a PUT: idle and request timeouts, upload slots (429).",
    tags: ['api', 'uploads'],
    response: { status: { 204: noBody } },
    payload: {
      output: 'stream',
      parse: false,
      maxBytes: Number.MAX_SAFE_INTEGER,
      // As a PUT: receiveUpload bounds a stalled or trickling body itself.
      timeout: false,
      allow: [TUS_CONTENT_TYPE],
    },
    timeout: { socket: false },
    ext: TUS_ROUTE_EXT,
    validate: { params: Joi.object<{ token: string }>({ token: uploadToken.required() }) },
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const { target, chunk } = await checkedBeforeTheBody(request, request.payload, async () => {
      checkTusRequest(request, true);
      const offset = byteCountHeader('Upload-Offset', headerOf(request, 'upload-offset'));
      const checksum = parseUploadChecksum(headerOf(request, 'upload-checksum'));
      const contentLength = headerOf(request, 'content-length');
      // The chunks this process answered ahead of storing them move the offset the next one starts
      // at; a client starting elsewhere (after a HEAD) is held to what is stored, once they are.
      let { ahead, ...resolved } = await resolveTusUpload(services, request.params.token);
      if (ahead !== undefined && offset !== ahead) {
        resolved = await resolveStoredUpload(services, request.params.token);
        ahead = undefined;
      }
      const partBytes = partSize(resolved.file.size, services.config.transfers.uploads.maxParts);
      const length = contentLength === undefined ? undefined : Number(contentLength);
      return { target: resolved, chunk: tusChunk(resolved.file, partBytes, offset, length, checksum, ahead) };
    });
    const result = await receiveBody(request, target, request.payload, chunk, { answerOnReceipt: true });
    const { 'Upload-Expires': expires } = fileHeaders(target);
    return withHeaders(h.response().code(204), {
      'Upload-Offset': String(result.upload_offset),
      'Upload-Expires': expires,
    });
  },
});
