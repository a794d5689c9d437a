import type { Lifecycle, Request, ResponseToolkit } from '@hapi/hapi';
import { holdsScope } from '../../lib/api-keys/scopes.ts';
import { DomainError } from '../../lib/errors.ts';
import { addressBucket } from '../../lib/net/address-bucket.ts';
import { clientIp } from '../client-ip.ts';
import { routeSettings } from '../types.ts';

// After authentication: draw from the rate budget, then check the scope.
// Authenticated calls spend their workspace's budget for the route's class;
// public routes spend a per-address budget. Without Redis the limiter counts
// in process (api/rate-limiter.ts): it never lets requests through unlimited.
export async function onPostAuth(request: Request, h: ResponseToolkit): Promise<Lifecycle.ReturnValue> {
  const { rateLimiter, services } = request.server.app;
  const settings = routeSettings(request);
  const caller = request.auth.credentials?.app?.caller;
  const rateClass = caller ? (settings.rateClass ?? (request.method === 'get' ? 'read' : 'write')) : 'public';
  const bucket = caller
    ? `${caller.workspaceId}:${caller.environment}:${rateClass}`
    : `ip:${addressBucket(clientIp(request, services.config))}`;
  const decision =
    settings.rateLimited === false ? null : await rateLimiter.take(bucket, services.config.rateLimits[rateClass]);
  if (decision) {
    request.app.rate = decision;
    if (!decision.allowed) {
      throw new DomainError(
        'rate_limited',
        `Rate limit of ${decision.limit} ${rateClass} requests per minute exceeded.`,
        {
          retryAfterSeconds: decision.retryAfterSeconds,
        },
      );
    }
  }
  if (caller && settings.scope && !holdsScope(caller.keyType, caller.scopes, settings.scope)) {
    throw new DomainError('scope_missing', `This key lacks the \`${settings.scope}\` scope.`, {
      details: { required_scope: settings.scope },
    });
  }
  return h.continue;
}
