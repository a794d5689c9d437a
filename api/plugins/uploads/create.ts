import type { Readable } from 'node:stream';
import Joi from 'joi';
import { partSize } from '../../../lib/uploads/parts.ts';
import { uploadOffset } from '../../../lib/uploads/receive.ts';
import { resolveStoredUpload } from '../../../lib/uploads/resolve.ts';
import { checkCreation } from '../../../lib/uploads/terminate.ts';
import {
  byteCountHeader,
  parseUploadChecksum,
  parseUploadMetadata,
  TUS_CONTENT_TYPE,
} from '../../../lib/uploads/tus.ts';
import { tusChunk } from '../../../lib/uploads/tus-chunk.ts';
import { defineRoute, type NoInput } from '../../route.ts';
import { headerOf } from '../../types.ts';
import { checkedBeforeTheBody, receiveBody } from './receive-body.ts';
import { noBody, uploadToken } from './schemas.ts';
import { TUS_HEADER_DOCS, TUS_RESUMABLE_HEADER, TUS_SDK_EXCLUSION } from './tus-headers-docs.ts';
import { checkTusRequest, fileHeaders, TUS_ROUTE_EXT, withHeaders } from './tus-protocol.ts';

export const tusCreateRoute = defineRoute<{ token: string }, NoInput, Readable>({
  method: 'POST',
  path: '/v1/uploads/{token}',
  options: {
    id: 'uploads.tusCreate',
    plugins: {
      valise: {
        openapi: {
          errors: [408, 409, 410, 412, 413, 415, 460],
          statuses: { 201: 'The upload is the declared file: PATCH its `Location`.' },
          requestHeaders: {
            'Tus-Resumable': TUS_RESUMABLE_HEADER,
            'Upload-Length': {
              description: "The file's size: the size declared for this upload URL (400 otherwise).",
              required: true,
              schema: { type: 'integer', minimum: 0 },
            },
            'Upload-Metadata': {
              description:
                'Comma-separated `key base64value` pairs; a `filename` or `name` must be the declared name (400 otherwise). Other keys are ignored.',
              schema: { type: 'string' },
            },
            'Upload-Checksum': {
              description: 'With a body (creation-with-upload): its checksum, as for PATCH.',
              schema: { type: 'string' },
            },
          },
          responseHeaders: {
            201: {
              Location: TUS_HEADER_DOCS.Location,
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
    description: 'Create a tus upload for a declared file',
    notes:
      "tus `creation` (docs/tus.md): Valise files are declared when their transfer, intake submission or vault item is created, so the upload URL is the tus endpoint and the upload at once. POST checks the declared length (and name) and answers `Location`: the same URL. With a body (`Content-Type: application/offset+octet-stream`, tus `creation-with-upload`), the body is the file from byte 0, received as a PATCH's; `Upload-Offset` says how much was stored. POSTing again changes nothing stored: the next PATCH at the stored offset goes on, one at 0 starts again.",
    tags: ['api', 'uploads'],
    response: { status: { 201: noBody } },
    payload: {
      output: 'stream',
      parse: false,
      maxBytes: Number.MAX_SAFE_INTEGER,
      timeout: false,
      // A creation without a body has no Content-Type: read as bytes, not as hapi's default JSON.
      defaultContentType: 'application/octet-stream',
      allow: [TUS_CONTENT_TYPE, 'application/octet-stream'],
    },
    timeout: { socket: false },
    ext: TUS_ROUTE_EXT,
    validate: { params: Joi.object<{ token: string }>({ token: uploadToken.required() }) },
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const contentLength = headerOf(request, 'content-length');
    const bodyLength = contentLength === undefined ? undefined : Number(contentLength);
    const withUpload = headerOf(request, 'content-type') === TUS_CONTENT_TYPE && bodyLength !== 0;
    const { target, chunk } = await checkedBeforeTheBody(request, request.payload, async () => {
      checkTusRequest(request, true);
      const length = byteCountHeader('Upload-Length', headerOf(request, 'upload-length'));
      const metadata = parseUploadMetadata(headerOf(request, 'upload-metadata'));
      const checksum = parseUploadChecksum(headerOf(request, 'upload-checksum'));
      const resolved = await resolveStoredUpload(services, request.params.token);
      checkCreation(resolved, length, metadata);
      const partBytes = partSize(resolved.file.size, services.config.transfers.uploads.maxParts);
      return {
        target: resolved,
        chunk: withUpload ? tusChunk(resolved.file, partBytes, 0, bodyLength, checksum) : null,
      };
    });
    const answer = (offset: number) =>
      withHeaders(h.response().code(201), {
        Location: `${services.config.api.publicBaseUrl}/v1/uploads/${request.params.token}`,
        'Upload-Offset': String(offset),
        'Upload-Expires': fileHeaders(target)['Upload-Expires'],
      });
    if (!chunk) {
      request.payload.resume();
      return answer(uploadOffset(target.file));
    }
    const result = await receiveBody(request, target, request.payload, chunk, { answerOnReceipt: true });
    return answer(result.upload_offset);
  },
});
