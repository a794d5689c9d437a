import { unlockShared } from '../../../lib/transfers/share.ts';
import { clientIp } from '../../client-ip.ts';
import { defineRoute } from '../../route.ts';
import { headerOf } from '../../types.ts';
import { codeParams, passwordOnly, sharedTransfer } from './schemas.ts';

export const unlockRoute = defineRoute({
  method: 'POST',
  path: '/v1/shares/{code}/unlock',
  options: {
    id: 'shares.unlock',
    plugins: { valise: { openapi: { errors: [403, 410] } } },
    auth: false,
    description: 'Unlock a password-protected share and see its files',
    notes:
      'Returns the whole share view (title, files with sizes, types and SHA-256) once the password is right. Counts no download. Attempts are limited per link and client address like download-links (429 `rate_limited` with Retry-After); an ended transfer is 410.',
    tags: ['api', 'shares'],
    response: { schema: sharedTransfer },
    validate: { params: codeParams, payload: passwordOnly },
  },
  handler: (request) => {
    const { services } = request.server.app;
    return unlockShared(services, request.params.code, request.payload?.password, {
      ip: clientIp(request, services.config),
      userAgent: headerOf(request, 'user-agent') ?? null,
    });
  },
});
