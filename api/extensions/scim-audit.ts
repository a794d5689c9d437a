import type { Request } from '@hapi/hapi';
import { recordScimAuditEvent } from '../../lib/scim/audit.ts';
import { routeSettings } from '../types.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Every call of a SCIM route by a SCIM token leaves a SCIM audit event (GET /v1/scim/audit),
 * successful or not: what it did, to which resource, the status it got and, on failure, why.
 */
export async function auditScimRequest(request: Request, status: number, body: unknown): Promise<void> {
  const scim = request.auth.credentials?.app?.scim;
  const settings = routeSettings(request).scim;
  if (!scim || !settings) return;
  const params = request.params as Record<string, string | undefined>;
  const answered = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  // The path's id only when well-formed (a refused request's raw params are arbitrary bytes), else the created one.
  const resourceId =
    params.id && UUID.test(params.id) ? params.id : typeof answered.id === 'string' ? answered.id : null;
  await recordScimAuditEvent(request.server.app.services, scim, {
    scim_token_id: scim.tokenId,
    operation: settings.operation,
    resource_type: settings.resourceType,
    resource_id: resourceId,
    response_status: status,
    // The detail may quote what was sent (a parameter's name): text PostgreSQL stores has no NUL.
    error_message:
      status >= 400 && typeof answered.detail === 'string'
        ? answered.detail.toWellFormed().replaceAll('\u0000', '\ufffd')
        : null,
  });
}
