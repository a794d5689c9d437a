import Joi from 'joi';
import { resolveStoredUpload } from '../../../lib/uploads/resolve.ts';
import { terminateUpload } from '../../../lib/uploads/terminate.ts';
import { defineRoute } from '../../route.ts';
import { noBody, uploadToken } from './schemas.ts';
import { TUS_HEADER_DOCS, TUS_RESUMABLE_HEADER, TUS_SDK_EXCLUSION } from './tus-headers-docs.ts';
import { checkTusRequest, TUS_ROUTE_EXT } from './tus-protocol.ts';

export const tusTerminateRoute = defineRoute<{ token: string }>({
  method: 'DELETE',
  path: '/v1/uploads/{token}',
  options: {
    id: 'uploads.tusTerminate',
    plugins: {
      valise: {
        openapi: {
          errors: [409, 410, 412],
          statuses: { 204: 'What was sent is let go; the file waits for an upload from byte 0.' },
          requestHeaders: { 'Tus-Resumable': TUS_RESUMABLE_HEADER },
          responseHeaders: { 204: { 'Tus-Resumable': TUS_HEADER_DOCS['Tus-Resumable'] } },
        },
        sdk: TUS_SDK_EXCLUSION,
      },
    },
    auth: false,
    description: 'Let go of an unfinished upload (tus termination)',
    notes:
      'tus `termination` (docs/tus.md): the bytes stored so far are deleted and the offset goes back to 0; the file stays declared, so its upload URL can upload it again from the start. A finished file is deleted with its transfer, intake document or vault item, not here (409); so is a file being sent now (409).',
    tags: ['api', 'uploads'],
    response: { status: { 204: noBody } },
    ext: TUS_ROUTE_EXT,
    validate: { params: Joi.object<{ token: string }>({ token: uploadToken.required() }) },
  },
  handler: async (request, h) => {
    checkTusRequest(request, true);
    const { services } = request.server.app;
    await terminateUpload(services, await resolveStoredUpload(services, request.params.token));
    return h.response().code(204);
  },
});
