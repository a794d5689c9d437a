import type { Request, Server } from '@hapi/hapi';
import { authenticate } from '../lib/api-keys/authenticate.ts';
import { DomainError, type ErrorCode } from '../lib/errors.ts';
import { authenticateSubmitter } from '../lib/intakes/publishable-keys.ts';
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
 * Runs `resolve` under the address's budget of failed authentications (RATE_LIMIT_AUTH_FAILURES a
 * minute): past the budget the address gets 429 before its key is even looked up, so a flood of
 * guesses costs no database work.
 */
async function withinFailureBudget<T>(request: Request, resolve: (ip: string) => Promise<T>): Promise<T> {
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
    return await resolve(ip);
  } catch (error) {
    if (error instanceof DomainError && AUTH_FAILURES.has(error.code)) await rateLimiter.take(bucket, budget);
    throw error;
  }
}

/** The `api-key` scheme, the default: Bearer keys, resolved by lib/api-keys/authenticate.ts. */
export function registerApiKeyAuth(server: Server) {
  server.auth.scheme('api-key', () => ({
    authenticate: async (request, h) => {
      const caller = await withinFailureBudget(request, (ip) =>
        authenticate(request.server.app.services, headerOf(request, 'authorization'), {
          ip,
          userAgent: headerOf(request, 'user-agent') ?? null,
          requestId: request.app.requestId,
        }),
      );
      return h.authenticated({ credentials: { app: { caller } } });
    },
  }));
  server.auth.strategy('api-key', 'api-key');
  server.auth.default('api-key');

  // Publishable keys (`cip_…`) authenticate the submitter routes of their own intake only
  // (docs/intakes.md); every other route refuses them as it refuses any unknown key.
  server.auth.scheme('publishable-key', () => ({
    authenticate: async (request, h) => {
      const intakeId = (request.params as { id?: unknown }).id;
      const submitter = await withinFailureBudget(request, () =>
        authenticateSubmitter(
          request.server.app.services,
          headerOf(request, 'authorization'),
          typeof intakeId === 'string' ? intakeId : '',
        ),
      );
      return h.authenticated({ credentials: { app: { submitter } } });
    },
  }));
  server.auth.strategy('publishable-key', 'publishable-key');
}
