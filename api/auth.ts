import type { Request, Server } from '@hapi/hapi';
import { authenticate } from '../lib/api-keys/authenticate.ts';
import { DomainError, type ErrorCode } from '../lib/errors.ts';
import { authenticateSubmitter } from '../lib/intakes/publishable-keys.ts';
import { authenticateMcpToken, looksLikeMcpToken } from '../lib/mcp/tokens.ts';
import { addressBucket } from '../lib/net/address-bucket.ts';
import { authenticateScimToken } from '../lib/scim/tokens.ts';
import { clientIp } from './client-ip.ts';
import type { Budget, RateDecision } from './rate-limiter.ts';
import { headerOf } from './types.ts';

/** What counts against an address's budget of failed authentications. */
const AUTH_FAILURES = new Set<ErrorCode>([
  'missing_api_key',
  'invalid_api_key',
  'revoked_api_key',
  'expired_api_key',
  'ip_not_allowed',
]);

/** The budget of failed authentications of the request's address (RATE_LIMIT_AUTH_FAILURES a minute). */
export function failureBudget(request: Request): Budget {
  const { services } = request.server.app;
  return {
    bucket: `auth-failures:${addressBucket(clientIp(request, services.config))}`,
    limit: services.config.rateLimits.authFailures,
  };
}

/** The budget of requests without an API key (public routes, publishable keys): per address, RATE_LIMIT_PUBLIC a minute. */
export function publicBudget(request: Request): Budget {
  const { services } = request.server.app;
  return {
    bucket: `ip:${addressBucket(clientIp(request, services.config))}`,
    limit: services.config.rateLimits.public,
  };
}

/** The 429 of a budget spent. */
export function rateLimitExceeded(drawn: RateDecision, rateClass: string): DomainError {
  return new DomainError('rate_limited', `Rate limit of ${drawn.limit} ${rateClass} requests per minute exceeded.`, {
    retryAfterSeconds: drawn.retryAfterSeconds,
  });
}

/**
 * Draws the request's per-address budget now (the guard then leaves it, request.app.rate):
 * past it, 429 before anything is looked up.
 */
async function drawBeforeLookup(request: Request): Promise<void> {
  const budget = publicBudget(request);
  const drawn = await request.server.app.rateLimiter.take(budget.bucket, budget.limit);
  request.app.rate = drawn;
  if (!drawn.allowed) throw rateLimitExceeded(drawn, 'public');
}

/** The 429 of an address past its budget of failed authentications. */
export function failureBudgetSpent(budget: Budget, standing: RateDecision): DomainError {
  return new DomainError(
    'rate_limited',
    `Too many failed authentications from this address (${budget.limit} a minute). Retry after ${standing.retryAfterSeconds} seconds.`,
    { retryAfterSeconds: standing.retryAfterSeconds },
  );
}

/**
 * Runs `resolve` under the address's budget of failed authentications: past the budget the
 * address gets 429 before its key costs any database work, so a flood of guesses costs none.
 * The budget is read when `resolve` first asks (`beforeDatabase`: a key the credential cache does
 * not hold, an audit entry, a usage cap) or when it fails. A good key answered from the cache
 * alone costs no database work and is not held up: the people behind one NAT are not locked out
 * by someone else's bad keys (docs/api-keys.md).
 */
async function withinFailureBudget<T>(
  request: Request,
  resolve: (ip: string, beforeDatabase: () => Promise<void>) => Promise<T>,
): Promise<T> {
  const { services, rateLimiter } = request.server.app;
  const ip = clientIp(request, services.config);
  const budget = failureBudget(request);
  let screened = false;
  const screen = async () => {
    if (screened) return;
    screened = true;
    const standing = await rateLimiter.peek(budget.bucket, budget.limit);
    if (!standing.allowed) throw failureBudgetSpent(budget, standing);
  };
  try {
    return await resolve(ip, screen);
  } catch (error) {
    if (error instanceof DomainError && AUTH_FAILURES.has(error.code)) {
      await screen();
      await rateLimiter.take(budget.bucket, budget.limit);
    }
    throw error;
  }
}

/** An API key's caller, under the address's budget of failed authentications. */
function authenticateApiKey(request: Request) {
  return withinFailureBudget(request, (ip, beforeDatabase) =>
    authenticate(request.server.app.services, headerOf(request, 'authorization'), {
      ip,
      userAgent: headerOf(request, 'user-agent') ?? null,
      requestId: request.app.requestId,
      beforeDatabase,
    }),
  );
}

/** An MCP token's caller. Tokens are not cached: the address's failure budget is read before each lookup. */
function authenticateMcp(request: Request) {
  return withinFailureBudget(request, async (ip, beforeDatabase) => {
    await beforeDatabase();
    return authenticateMcpToken(request.server.app.services, headerOf(request, 'authorization'), {
      ip,
      userAgent: headerOf(request, 'user-agent') ?? null,
      requestId: request.app.requestId,
    });
  });
}

/** The `api-key` scheme, the default: Bearer keys, resolved by lib/api-keys/authenticate.ts. */
export function registerApiKeyAuth(server: Server) {
  server.auth.scheme('api-key', () => ({
    authenticate: async (request, h) => {
      const caller = await authenticateApiKey(request);
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
      const submitter = await withinFailureBudget(request, async (_ip, beforeDatabase) => {
        // Publishable keys are not cached, and sit in public pages: the address's failure budget
        // is read and its rate budget drawn before the key costs a lookup, not after (F16).
        await beforeDatabase();
        await drawBeforeLookup(request);
        return authenticateSubmitter(
          request.server.app.services,
          headerOf(request, 'authorization'),
          typeof intakeId === 'string' ? intakeId : '',
        );
      });
      return h.authenticated({ credentials: { app: { submitter } } });
    },
  }));
  server.auth.strategy('publishable-key', 'publishable-key');

  // SCIM tokens (`scim_…`) open the SCIM resource routes of their workspace only (docs/scim.md);
  // API keys do not open those, and SCIM tokens open nothing else. They are not cached: the address's
  // failure budget is read before each lookup.
  server.auth.scheme('scim-token', () => ({
    authenticate: async (request, h) => {
      const scim = await withinFailureBudget(request, async (_ip, beforeDatabase) => {
        await beforeDatabase();
        return authenticateScimToken(request.server.app.services, headerOf(request, 'authorization'));
      });
      return h.authenticated({ credentials: { app: { scim } } });
    },
  }));
  server.auth.strategy('scim-token', 'scim-token');

  // MCP tokens (`svc_mcp_…`) open the MCP routes of their workspace only (docs/mcp.md): the transport
  // takes nothing else, and every other route refuses them as an unknown key (their value has no API
  // key's shape). The control endpoint takes either an MCP token or an API key.
  server.auth.scheme('mcp-token', () => ({
    authenticate: async (request, h) =>
      h.authenticated({ credentials: { app: { mcp: await authenticateMcp(request) } } }),
  }));
  server.auth.strategy('mcp-token', 'mcp-token');
  server.auth.scheme('mcp-control', () => ({
    authenticate: async (request, h) => {
      const bearer = /^Bearer\s+(\S+)/i.exec(headerOf(request, 'authorization') ?? '')?.[1];
      if (bearer !== undefined && looksLikeMcpToken(bearer)) {
        return h.authenticated({ credentials: { app: { mcp: await authenticateMcp(request) } } });
      }
      return h.authenticated({ credentials: { app: { caller: await authenticateApiKey(request) } } });
    },
  }));
  server.auth.strategy('mcp-control', 'mcp-control');
}
