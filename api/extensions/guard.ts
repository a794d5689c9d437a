import type { Lifecycle, Request, ResponseToolkit } from '@hapi/hapi';
import { holdsScope } from '../../lib/api-keys/scopes.ts';
import { DomainError } from '../../lib/errors.ts';
import type { Tenant } from '../../lib/tenancy.ts';
import { publicBudget, rateLimitExceeded } from '../auth.ts';
import type { Budget, RateDecision } from '../rate-limiter.ts';
import { type AnyRequest, type RateClass, routeSettings } from '../types.ts';

// After authentication: draw from the rate budget, then check the scope.
// Authenticated calls spend their workspace's budget for the route's class;
// public routes spend a per-address budget. Without Redis the limiter counts
// in process (api/rate-limiter.ts): it never lets requests through unlimited.
export async function onPostAuth(request: Request, h: ResponseToolkit): Promise<Lifecycle.ReturnValue> {
  const settings = routeSettings(request);
  const caller = request.auth.credentials?.app?.caller;
  // A SCIM or MCP token spends its workspace's budget as a key of that environment would.
  const tenant = caller ?? request.auth.credentials?.app?.scim ?? request.auth.credentials?.app?.mcp?.caller;
  const rateClass = tenant ? (settings.rateClass ?? (request.method === 'get' ? 'read' : 'write')) : 'public';
  const draw = tenant && rateClass !== 'public' ? tenantBudget(request, tenant, rateClass) : publicBudget(request);
  // A publishable key's request drew from its budget already, before its key was looked up (api/auth.ts).
  const drawn = request.app.rate ? null : await drawFromBudgets(request, settings.rateLimited === false ? null : draw);
  if (drawn) {
    request.app.rate = drawn;
    if (!drawn.allowed) throw rateLimitExceeded(drawn, rateClass);
  }
  if (caller && settings.scope && !holdsScope(caller.keyType, caller.scopes, settings.scope)) {
    throw new DomainError('scope_missing', `This key lacks the \`${settings.scope}\` scope.`, {
      details: { required_scope: settings.scope },
    });
  }
  return h.continue;
}

/** A tenant's budget for a class of requests (RATE_LIMIT_READ, _WRITE, _EXPENSIVE a minute). */
export function tenantBudget(request: AnyRequest, tenant: Tenant, rateClass: RateClass): Budget {
  return {
    bucket: `${tenant.workspaceId}:${tenant.environment}:${rateClass}`,
    limit: request.server.app.services.config.rateLimits[rateClass],
  };
}

/** Draws from the rate budget; null for a route that has none. */
async function drawFromBudgets(request: Request, draw: Budget | null): Promise<RateDecision | null> {
  return draw && (await request.server.app.rateLimiter.take(draw.bucket, draw.limit));
}
