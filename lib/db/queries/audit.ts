import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { PageWindow } from '../../pagination.ts';
import type { Tenant } from '../../tenancy.ts';
import { AUDIT_OUTCOMES, type AuditOutcome, ENVIRONMENTS } from '../../vocabulary.ts';
import { olderThanCursor } from '../paging.ts';
import { sql } from '../sql.ts';

export const auditRow = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  actor_id: z.uuid().nullable(),
  api_key_id: z.uuid().nullable(),
  action: z.string(),
  resource_type: z.string().nullable(),
  resource_id: z.string().nullable(),
  ip_address: z.string().nullable(),
  user_agent: z.string().nullable(),
  country_code: z.string().nullable(),
  status: z.enum(AUDIT_OUTCOMES),
  request_id: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: z.date(),
});
export type AuditRow = z.infer<typeof auditRow>;

export type AuditEntry = Tenant & {
  actorId: string | null;
  apiKeyId: string | null;
  action: string;
  resourceType: string | null;
  resourceId: string | null;
  ipAddress: string | null;
  userAgent: string | null;
  countryCode: string | null;
  status: AuditOutcome;
  requestId: string | null;
  metadata: Record<string, unknown>;
};

export type AuditFilters = {
  action?: string | undefined;
  actorId?: string | undefined;
  resourceType?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
};

export function createAuditQueries(db: CommonQueryMethods) {
  async function insert(entry: AuditEntry): Promise<void> {
    await db.query(sql.typeAlias('void')`
      INSERT INTO audit_log (workspace_id, environment, actor_id, api_key_id, action, resource_type, resource_id,
                             ip_address, user_agent, country_code, status, request_id, metadata)
      VALUES (${entry.workspaceId}, ${entry.environment}, ${entry.actorId}, ${entry.apiKeyId}, ${entry.action},
              ${entry.resourceType}, ${entry.resourceId}, ${entry.ipAddress}, ${entry.userAgent}, ${entry.countryCode},
              ${entry.status}, ${entry.requestId}, ${sql.jsonb(entry.metadata as never)})`);
  }

  return {
    insert,

    /**
     * One entry standing for repeated occurrences: the first occurrence with
     * this collapse key inserts the entry with `metadata.count` 1, later ones
     * add to the count and set `metadata.last_at` and `metadata.last_request_id`.
     */
    async insertCollapsed(entry: AuditEntry, collapseKey: string, at: Date): Promise<void> {
      const metadata = { ...entry.metadata, count: 1, last_at: at.toISOString(), last_request_id: entry.requestId };
      await db.query(sql.typeAlias('void')`
        INSERT INTO audit_log (workspace_id, environment, actor_id, api_key_id, action, resource_type, resource_id,
                               ip_address, user_agent, country_code, status, request_id, metadata, collapse_key)
        VALUES (${entry.workspaceId}, ${entry.environment}, ${entry.actorId}, ${entry.apiKeyId}, ${entry.action},
                ${entry.resourceType}, ${entry.resourceId}, ${entry.ipAddress}, ${entry.userAgent}, ${entry.countryCode},
                ${entry.status}, ${entry.requestId}, ${sql.jsonb(metadata as never)}, ${collapseKey})
        ON CONFLICT (workspace_id, collapse_key) WHERE collapse_key IS NOT NULL
        DO UPDATE SET metadata = audit_log.metadata || jsonb_build_object(
          'count', coalesce((audit_log.metadata->>'count')::integer, 1) + 1,
          'last_at', ${metadata.last_at}::text,
          'last_request_id', ${entry.requestId}::text)`);
    },

    /** An entry for what the system did on its own (timers, scans): no actor, no request. */
    async insertSystem(
      entry: Tenant & {
        action: string;
        resourceType: string;
        resourceId: string;
        apiKeyId?: string | null;
        metadata?: Record<string, unknown>;
      },
    ): Promise<void> {
      await insert({
        workspaceId: entry.workspaceId,
        environment: entry.environment,
        actorId: null,
        apiKeyId: entry.apiKeyId ?? null,
        action: entry.action,
        resourceType: entry.resourceType,
        resourceId: entry.resourceId,
        ipAddress: null,
        userAgent: null,
        countryCode: null,
        status: 'success',
        requestId: null,
        metadata: entry.metadata ?? {},
      });
    },

    async list(tenant: Tenant, filters: AuditFilters, window: PageWindow): Promise<readonly AuditRow[]> {
      const conditions = [
        sql.fragment`workspace_id = ${tenant.workspaceId}`,
        sql.fragment`environment = ${tenant.environment}`,
        filters.action !== undefined && sql.fragment`action = ${filters.action}`,
        filters.actorId !== undefined && sql.fragment`actor_id = ${filters.actorId}`,
        filters.resourceType !== undefined && sql.fragment`resource_type = ${filters.resourceType}`,
        filters.since !== undefined && sql.fragment`created_at >= ${sql.timestamp(filters.since)}`,
        filters.until !== undefined && sql.fragment`created_at < ${sql.timestamp(filters.until)}`,
        olderThanCursor(window, 'audit_log'),
      ].filter((c) => c !== false);
      return db.any(sql.type(auditRow)`
        SELECT id, workspace_id, environment, actor_id, api_key_id, action, resource_type, resource_id, ip_address,
               user_agent, country_code, status, request_id, metadata, created_at
        FROM audit_log
        WHERE ${sql.join(conditions, sql.fragment` AND `)}
        ORDER BY created_at DESC, id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },
  };
}
