import { type AuditFilters, type AuditRow, createAuditQueries } from '../db/queries/audit.ts';
import type { PageQuery } from '../pagination.ts';
import type { Services } from '../services.ts';
import type { Caller } from '../tenancy.ts';

/** The filters of the list and the export, as the query string names them. */
export type AuditFilterQuery = {
  action?: string;
  actor_id?: string;
  resource_type?: string;
  since?: Date;
  until?: Date;
};

export type AuditQuery = PageQuery & AuditFilterQuery;

export function auditFiltersOf(query: AuditFilterQuery): AuditFilters {
  return {
    action: query.action,
    actorId: query.actor_id,
    resourceType: query.resource_type,
    since: query.since,
    until: query.until,
  };
}

export async function listAudit(services: Services, caller: Caller, query: AuditQuery) {
  const filters = auditFiltersOf(query);
  const window = services.paginator.open('audit', filters, query);
  const rows = await createAuditQueries(services.db).list(
    { workspaceId: caller.workspaceId, environment: caller.environment },
    filters,
    window,
  );
  return services.paginator.close('audit', filters, query, rows, presentAuditEntry);
}

function presentAuditEntry(row: AuditRow) {
  const { environment: _environment, ...entry } = row;
  return { ...entry, object: 'audit_entry' as const };
}
