import type { Request } from '@hapi/hapi';
import { createAuditQueries } from '../../lib/db/queries/audit.ts';
import { clientIp } from '../client-ip.ts';
import { headerOf, routeSettings } from '../types.ts';

const MUTATING = new Set(['post', 'put', 'patch', 'delete']);
/** A well-formed resource id: a uuid, or a prefixed id such as an intake's `in_…`. */
const RESOURCE_ID = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[a-z]{2,8}_[0-9a-z]{20,40})$/i;

/**
 * Metadata a route reads from its request (an export's filters, an acceptance's slug) as jsonb can hold
 * it: a refused request's values are whatever was sent, and PostgreSQL refuses NUL and lone surrogates.
 */
function storable<T>(value: T): T {
  if (typeof value === 'string') return value.toWellFormed().replaceAll('\u0000', '\ufffd') as T;
  if (Array.isArray(value)) return value.map(storable) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, member]) => [storable(key), storable(member)])) as T;
  }
  return value;
}

/**
 * Every authenticated mutating request leaves an audit entry, successful or not, and so does a
 * read that declares its `audit` (one that takes content away, such as a transfer's archive).
 */
export async function auditRequest(request: Request, status: number, body: unknown, errorCode: string | null) {
  const caller = request.auth.credentials?.app?.caller;
  const settings = routeSettings(request).audit;
  if (!caller || (!MUTATING.has(request.method) && !settings)) return;
  const params = request.params as Record<string, string | undefined>;
  const bodyId = body && typeof body === 'object' && 'id' in body ? String((body as { id: unknown }).id) : null;
  const { services } = request.server.app;
  await createAuditQueries(services.db).insert({
    workspaceId: caller.workspaceId,
    environment: caller.environment,
    actorId: caller.userId,
    apiKeyId: caller.apiKeyId,
    action: settings?.action ?? `${request.method.toUpperCase()} ${request.route.path}`,
    resourceType: settings?.resourceType ?? null,
    // The path id is recorded only when it is a well-formed id: a rejected request's raw params are arbitrary bytes.
    resourceId: settings?.resourceId
      ? settings.resourceId(request)
      : params.id && RESOURCE_ID.test(params.id)
        ? params.id
        : status < 400
          ? bodyId
          : null,
    ipAddress: clientIp(request, services.config),
    userAgent: headerOf(request, 'user-agent')?.slice(0, 512) ?? null,
    status: status < 400 ? 'success' : 'failure',
    requestId: request.app.requestId,
    metadata: {
      ...storable(settings?.metadata?.(request)),
      status_code: status,
      ...(errorCode ? { error_code: errorCode } : {}),
      ...(request.app.idempotency?.replayed ? { idempotent_replay: true } : {}),
    },
  });
}
