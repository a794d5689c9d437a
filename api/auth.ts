import type { Server } from '@hapi/hapi';
import { authenticate } from '../lib/api-keys/authenticate.ts';
import { DomainError, type ErrorCode } from '../lib/errors.ts';
import { addressBucket } from '../lib/net/address-bucket.ts';
import { clientIp } from './client-ip.ts';
import { headerOf } from './types.ts';

/** What counts against an address's budget of failed authentications. */
const AUTH_FAILURES = new Set<ErrorCode>([
  'missing_api_key',
  'invalid_api_key',
  'revoked_api_key',
  'expired_api_key',
  'ip_not_allowed',
]);

/**
 * The `api-key` scheme: Bearer keys, resolved by lib/api-keys/authenticate.ts.
 * Failed authentications are counted per client address (RATE_LIMIT_AUTH_FAILURES
 * a minute); past the budget the address gets 429 before its key is even looked
 * up, so a flood of guesses costs no database work.
 */
export function registerApiKeyAuth(server: Server) {
  server.auth.scheme('api-key', () => ({
    authenticate: async (request, h) => {
      const { services, rateLimiter } = request.server.app;
      const ip = clientIp(request, services.config);
      const bucket = `auth-failures:${addressBucket(ip)}`;
      const budget = services.config.rateLimits.authFailures;
      const standing = await rateLimiter.peek(bucket, budget);
      if (!standing.allowed) {
        throw new DomainError(
          'rate_limited',
          `Too many failed authentications from this address (${budget} a minute). Retry after ${standing.retryAfterSeconds} seconds.`,
          { retryAfterSeconds: standing.retryAfterSeconds },
        );
      }
      try {
        const caller = await authenticate(services, headerOf(request, 'authorization'), {
          ip,
          userAgent: headerOf(request, 'user-agent') ?? null,
          requestId: request.app.requestId,
        });
        return h.authenticated({ credentials: { app: { caller } } });
      } catch (error) {
        if (error instanceof DomainError && AUTH_FAILURES.has(error.code)) await rateLimiter.take(bucket, budget);
        throw error;
      }
    },
  }));
  server.auth.strategy('api-key', 'api-key');
  server.auth.default('api-key');
}
