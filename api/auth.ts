import type { Server } from '@hapi/hapi';
import { authenticate } from '../lib/api-keys/authenticate.ts';
import { clientIp } from './client-ip.ts';
import { headerOf } from './types.ts';

/** The `api-key` scheme: Bearer keys, resolved by lib/api-keys/authenticate.ts. */
export function registerApiKeyAuth(server: Server) {
  server.auth.scheme('api-key', () => ({
    authenticate: async (request, h) => {
      const { services } = request.server.app;
      const caller = await authenticate(services, headerOf(request, 'authorization'), {
        ip: clientIp(request, services.config),
        userAgent: headerOf(request, 'user-agent') ?? null,
        requestId: request.app.requestId,
      });
      return h.authenticated({ credentials: { app: { caller } } });
    },
  }));
  server.auth.strategy('api-key', 'api-key');
  server.auth.default('api-key');
}
