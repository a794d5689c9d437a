import Joi from 'joi';
import { resolveUpload } from '../../../lib/uploads/resolve.ts';
import { TUS_REQUEST_HEADERS, TUS_RESPONSE_HEADERS } from '../../../lib/uploads/tus.ts';
import { defineRoute } from '../../route.ts';
import { headerOf } from '../../types.ts';
import { noBody, uploadToken } from './schemas.ts';
import { TUS_HEADER_DOCS, TUS_SDK_EXCLUSION } from './tus-headers-docs.ts';
import { discoveryHeaders, withHeaders } from './tus-protocol.ts';

/** The methods an upload URL answers, for a browser's preflight. */
const METHODS = 'GET, HEAD, PUT, POST, PATCH, DELETE, OPTIONS';
/** What a browser may send to an upload URL besides the CORS-safelisted headers. */
const ALLOWED_HEADERS = ['Content-Type', 'Content-Range', 'Authorization', ...TUS_REQUEST_HEADERS].join(', ');
/** How long a browser may reuse a preflight's answer (seconds). */
const PREFLIGHT_MAX_AGE = 86400;

export const tusOptionsRoute = defineRoute<{ token: string }>({
  method: 'OPTIONS',
  path: '/v1/uploads/{token}',
  options: {
    id: 'uploads.tusOptions',
    plugins: {
      valise: {
        rateLimited: false,
        openapi: {
          errors: [410],
          statuses: { 204: "What the upload URL supports (tus discovery), or a browser's CORS preflight answered." },
          responseHeaders: {
            204: {
              'Tus-Version': TUS_HEADER_DOCS['Tus-Version'],
              'Tus-Extension': TUS_HEADER_DOCS['Tus-Extension'],
              'Tus-Max-Size': TUS_HEADER_DOCS['Tus-Max-Size'],
              'Tus-Checksum-Algorithm': TUS_HEADER_DOCS['Tus-Checksum-Algorithm'],
            },
          },
        },
        sdk: TUS_SDK_EXCLUSION,
      },
    },
    auth: false,
    description: 'What an upload URL supports (tus)',
    notes:
      "tus discovery (docs/tus.md): `Tus-Version`, `Tus-Extension`, `Tus-Max-Size` (the file's declared size) and `Tus-Checksum-Algorithm`. A browser's CORS preflight (with `Access-Control-Request-Method`) is answered here too, for any origin, without looking the URL up.",
    tags: ['api', 'uploads'],
    response: { status: { 204: noBody } },
    validate: { params: Joi.object<{ token: string }>({ token: uploadToken.required() }) },
  },
  handler: async (request, h) => {
    // An explicit OPTIONS route takes the place of hapi's CORS preflight answer for this path;
    // hapi still adds Access-Control-Allow-Origin by the server's origin rule, as to every answer.
    if (headerOf(request, 'access-control-request-method') !== undefined) {
      return withHeaders(h.response().code(204), {
        'Access-Control-Allow-Methods': METHODS,
        'Access-Control-Allow-Headers': ALLOWED_HEADERS,
        'Access-Control-Expose-Headers': TUS_RESPONSE_HEADERS.join(', '),
        'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE),
      });
    }
    const { services } = request.server.app;
    const target = await resolveUpload(services, request.params.token);
    return withHeaders(h.response().code(204), discoveryHeaders(target.file.size));
  },
});
