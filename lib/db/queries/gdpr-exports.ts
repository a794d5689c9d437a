import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { GDPR_EXPORT_STATUSES } from '../../gdpr/vocabulary.ts';
import type { Tenant } from '../../tenancy.ts';
import { ENVIRONMENTS } from '../../vocabulary.ts';
import { sql } from '../sql.ts';

/** The AAD an export's data key is wrapped with, binding it to the export. */
export const gdprExportKeyAad = (exportId: string) => `gdpr-export:${exportId}`;

export const gdprExportRow = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  requested_by: z.uuid(),
  subject_user_id: z.uuid().nullable(),
  status: z.enum(GDPR_EXPORT_STATUSES),
  current_family: z.string().nullable(),
  families_done: z.number().int(),
  families_total: z.number().int(),
  object_key: z.string().nullable(),
  data_key_wrapped: z.string().nullable(),
  size: z.coerce.number().int().nullable(),
  error: z.string().nullable(),
  created_at: z.date(),
  completed_at: z.date().nullable(),
  retention_until: z.date().nullable(),
  expired_at: z.date().nullable(),
  objects_deleted_at: z.date().nullable(),
});
export type GdprExportRow = z.infer<typeof gdprExportRow>;

const columns = sql.fragment`
  e.id, e.workspace_id, e.environment, e.requested_by, e.subject_user_id, e.status, e.current_family,
  e.families_done, e.families_total, e.object_key, e.data_key_wrapped, e.size, e.error,
  e.created_at, e.completed_at, e.retention_until, e.expired_at, e.objects_deleted_at`;

export function createGdprExportQueries(db: CommonQueryMethods) {
  return {
    async insert(tenant: Tenant, requestedBy: string, subjectUserId: string | null): Promise<GdprExportRow> {
      return db.one(sql.type(gdprExportRow)`
        INSERT INTO gdpr_exports AS e (workspace_id, environment, requested_by, subject_user_id)
        VALUES (${tenant.workspaceId}, ${tenant.environment}, ${requestedBy}, ${subjectUserId})
        RETURNING ${columns}`);
    },

    async find(tenant: Tenant, id: string): Promise<GdprExportRow | null> {
      return db.maybeOne(sql.type(gdprExportRow)`
        SELECT ${columns} FROM gdpr_exports e
        WHERE e.id = ${id} AND e.workspace_id = ${tenant.workspaceId} AND e.environment = ${tenant.environment}`);
    },

    async latest(tenant: Tenant): Promise<GdprExportRow | null> {
      return db.maybeOne(sql.type(gdprExportRow)`
        SELECT ${columns} FROM gdpr_exports e
        WHERE e.workspace_id = ${tenant.workspaceId} AND e.environment = ${tenant.environment}
        ORDER BY e.created_at DESC, e.id DESC LIMIT 1`);
    },

    /** The workflow's own read: by id alone (its id came from the row). */
    async byId(id: string): Promise<GdprExportRow | null> {
      return db.maybeOne(sql.type(gdprExportRow)`SELECT ${columns} FROM gdpr_exports e WHERE e.id = ${id}`);
    },

    /**
     * The export starts: its data key is kept (wrapped) for its parts and its object. A second call
     * finds the key already there and answers the row as it is.
     */
    async begin(id: string, dataKeyWrapped: string, familiesTotal: number): Promise<GdprExportRow | null> {
      return db.maybeOne(sql.type(gdprExportRow)`
        UPDATE gdpr_exports AS e SET status = 'running', families_total = ${familiesTotal},
          data_key_wrapped = COALESCE(e.data_key_wrapped, ${dataKeyWrapped})
        WHERE e.id = ${id} AND e.status IN ('queued', 'running')
        RETURNING ${columns}`);
    },

    /** Progress: the family being collected; a `queued` export becomes `running`. */
    async collecting(id: string, family: string, done: number, total: number): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE gdpr_exports SET status = 'running', current_family = ${family}, families_done = ${done},
          families_total = ${total}
        WHERE id = ${id} AND status IN ('queued', 'running')`);
    },

    /** Records the sealed object; false when the export is no longer running (shredded meanwhile). */
    async complete(
      id: string,
      stored: { objectKey: string; size: number; retentionUntil: Date },
    ): Promise<GdprExportRow | null> {
      return db.maybeOne(sql.type(gdprExportRow)`
        UPDATE gdpr_exports AS e SET status = 'completed', current_family = NULL, families_done = families_total,
          object_key = ${stored.objectKey}, size = ${stored.size}, completed_at = ms_now(),
          retention_until = ${sql.timestamp(stored.retentionUntil)}
        WHERE e.id = ${id} AND e.status IN ('queued', 'running')
        RETURNING ${columns}`);
    },

    async fail(id: string, error: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE gdpr_exports SET status = 'failed', current_family = NULL, error = ${error.slice(0, 500)}
        WHERE id = ${id} AND status IN ('queued', 'running')`);
    },

    /** The end of its retention (or an erasure): its data key goes, so the object is noise. */
    async expire(id: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE gdpr_exports SET status = 'expired', expired_at = COALESCE(expired_at, ms_now()), data_key_wrapped = NULL
        WHERE id = ${id} AND status <> 'failed'`);
    },

    async markObjectDeleted(id: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE gdpr_exports SET objects_deleted_at = COALESCE(objects_deleted_at, ms_now()) WHERE id = ${id}`);
    },

    /** Up to `limit` of a tenant's exports created before `cutoff`, locked until the transaction ends. */
    async lockOlderThan(tenant: Tenant, cutoff: Date, limit: number): Promise<readonly GdprExportRow[]> {
      return db.any(sql.type(gdprExportRow)`
        SELECT ${columns} FROM gdpr_exports e
        WHERE e.workspace_id = ${tenant.workspaceId} AND e.environment = ${tenant.environment}
          AND e.created_at < ${sql.timestamp(cutoff)}
        ORDER BY e.created_at LIMIT ${limit} FOR UPDATE`);
    },

    /** Deletes a tenant's exports by id; the count deleted. */
    async deleteByIds(tenant: Tenant, ids: readonly string[]): Promise<number> {
      const gone = await db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
        DELETE FROM gdpr_exports
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
          AND id = ANY(${sql.array([...ids], 'uuid')})
        RETURNING id`);
      return gone.length;
    },

    /** Ends every export about one user of a workspace (their erasure); the count of exports ended. */
    async shredAbout(workspaceId: string, userId: string): Promise<number> {
      const ended = await db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
        UPDATE gdpr_exports SET status = 'expired', expired_at = COALESCE(expired_at, ms_now()), data_key_wrapped = NULL
        WHERE workspace_id = ${workspaceId} AND subject_user_id = ${userId}
          AND (status <> 'expired' OR data_key_wrapped IS NOT NULL)
        RETURNING id`);
      return ended.length;
    },
  };
}
