import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import { openDownload } from '../../../lib/transfers/share.ts';
import { headerOf } from '../../types.ts';

export const downloadRoute: ServerRoute = {
  method: 'GET',
  path: '/v1/downloads/{token}',
  options: {
    auth: false,
    description: 'Download one file',
    notes: 'Streams the file (decrypted in server mode). Supports a single HTTP Range. Links expire after 300 seconds.',
    tags: ['api', 'shares'],
    validate: {
      params: Joi.object({
        token: Joi.string()
          .max(1024)
          .pattern(/^[\w-]+\.[\w-]+$/, 'token')
          .required(),
      }),
    },
    timeout: { socket: false },
    // Ranges are served here, from the segments they need, and bodies are sent as they are.
    response: { ranges: false },
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const download = await openDownload(
      services,
      (request.params as { token: string }).token,
      headerOf(request, 'range'),
    );
    const response = h.response(download.stream).code(download.status).compressed('identity');
    for (const [name, value] of Object.entries(download.headers)) response.header(name, value);
    return response;
  },
};
