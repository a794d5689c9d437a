import { createScimQueries, type NewScimAuditEvent, type ScimAuditRow } from '../db/queries/scim.ts';
import type { Services } from '../services.ts';
import { type Caller, type Tenant, tenantOf } from '../tenancy.ts';
import type { ScimOperation } from './vocabulary.ts';

// The SCIM audit (spec: "SCIM audit event", GET /v1/scim/audit): one row per SCIM operation on
// members or groups, successful or not, in the token's workspace and environment.

export const SCIM_AUDIT_DEFAULT_LIMIT = 100;
export const SCIM_AUDIT_MAX_LIMIT = 500;

export type ScimAuditQuery = { limit?: number | undefined; operation?: ScimOperation | undefined };

export function presentScimAuditEvent(row: ScimAuditRow) {
  return {
    id: row.id,
    object: 'scim_audit_event' as const,
    scim_token_id: row.scim_token_id,
    operation: row.operation,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    response_status: row.response_status,
    error_message: row.error_message,
    created_at: row.created_at.toISOString(),
  };
}

export async function recordScimAuditEvent(services: Services, tenant: Tenant, event: NewScimAuditEvent) {
  await createScimQueries(services.db).insertAuditEvent(tenant, {
    ...event,
    error_message: event.error_message?.slice(0, 1000) ?? null,
  });
}

/** `limit` is clamped into 1..500 (default 100); newest first. */
export async function listScimAudit(services: Services, caller: Caller, query: ScimAuditQuery) {
  const limit = Math.min(SCIM_AUDIT_MAX_LIMIT, Math.max(1, Math.trunc(query.limit ?? SCIM_AUDIT_DEFAULT_LIMIT)));
  const operation = query.operation ?? null;
  // One more than the page tells whether there are more.
  const rows = await createScimQueries(services.db).listAuditEvents(tenantOf(caller), limit + 1, operation);
  return {
    object: 'list' as const,
    data: rows.slice(0, limit).map(presentScimAuditEvent),
    has_more: rows.length > limit,
    next_cursor: null,
    limit,
    offset: null,
    filter: { limit, operation },
  };
}
