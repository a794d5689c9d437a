import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { countryOf } from '../../net/country.ts';
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

/**
 * An entry as exported, in the export's field order: dates already in the API's text form and
 * metadata as PostgreSQL's JSON text, so that a million rows cost no date or JSON parsing.
 */
export const exportedEntryRow = z.object({
  id: z.uuid(),
  seq: z.coerce.number().int(),
  created_at: z.string(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  actor_id: z.uuid().nullable(),
  api_key_id: z.uuid().nullable(),
  action: z.string(),
  resource_type: z.string().nullable(),
  resource_id: z.string().nullable(),
  status: z.enum(AUDIT_OUTCOMES),
  request_id: z.string().nullable(),
  ip_address: z.string().nullable(),
  user_agent: z.string().nullable(),
  country_code: z.string().nullable(),
  metadata: z.string(),
  collapsed: z.boolean(),
  erased_at: z.string().nullable(),
  personal_digest: z.string(),
  prev_hash: z.string(),
  entry_hash: z.string(),
});
export type ExportedEntryRow = z.infer<typeof exportedEntryRow>;

/** A link of the chain as verification reads it: what the database recomputes, next to what is stored. */
export const chainLinkRow = z.object({
  id: z.uuid(),
  seq: z.coerce.number().int(),
  prev_hash: z.string(),
  entry_hash: z.string(),
  created_at: z.date(),
  /** The stored `entry_hash` is the hash of the entry as it stands. */
  hash_matches: z.boolean(),
  /** Not erased: the personal fields still give the stored digest. Erased: they are all gone. */
  personal_matches: z.boolean(),
});
export type ChainLinkRow = z.infer<typeof chainLinkRow>;

/** Where a chain's verification starts: seq 0 and 64 zeros until a purge moves it. */
export const chainAnchorRow = z.object({
  anchor_seq: z.coerce.number().int(),
  anchor_hash: z.string(),
  anchor_created_at: z.date().nullable(),
});
export type ChainAnchorRow = z.infer<typeof chainAnchorRow>;

const purgedLinkRow = z.object({ seq: z.coerce.number().int(), entry_hash: z.string(), created_at: z.date() });

/** Whose personal data an erasure removes: entries of these users, or from these addresses. */
/**
 * Whose entries an erasure pseudonymises: those of these users, from these addresses, or naming
 * these e-mail addresses in a personal metadata key (someone else's entry about them).
 */
export type ErasureMatch = {
  actorIds?: readonly string[];
  ipAddresses?: readonly string[];
  emails?: readonly string[];
};

export type AuditEntry = Tenant & {
  actorId: string | null;
  apiKeyId: string | null;
  action: string;
  resourceType: string | null;
  resourceId: string | null;
  ipAddress: string | null;
  userAgent: string | null;
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
              ${entry.resourceType}, ${entry.resourceId}, ${entry.ipAddress}, ${entry.userAgent}, ${countryOf(entry.ipAddress)},
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
                ${entry.resourceType}, ${entry.resourceId}, ${entry.ipAddress}, ${entry.userAgent}, ${countryOf(entry.ipAddress)},
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
        status: 'success',
        requestId: null,
        metadata: entry.metadata ?? {},
      });
    },

    async list(tenant: Tenant, filters: AuditFilters, window: PageWindow): Promise<readonly AuditRow[]> {
      const conditions = [...filterConditions(tenant, filters), olderThanCursor(window, 'audit_log')];
      return db.any(sql.type(auditRow)`
        SELECT id, workspace_id, environment, actor_id, api_key_id, action, resource_type, resource_id, ip_address,
               user_agent, country_code, status, request_id, metadata, created_at
        FROM audit_log
        WHERE ${sql.join(conditions, sql.fragment` AND `)}
        ORDER BY created_at DESC, id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },

    /** The next `limit` entries of the chain in a range of seqs, oldest first, with the list's filters. */
    async exportBatch(
      tenant: Tenant,
      filters: AuditFilters,
      seqs: { after: number; upTo: number },
      limit: number,
    ): Promise<readonly ExportedEntryRow[]> {
      const conditions = [
        ...filterConditions(tenant, filters),
        sql.fragment`seq > ${seqs.after}`,
        sql.fragment`seq <= ${seqs.upTo}`,
      ];
      return db.any(sql.type(exportedEntryRow)`
        SELECT id, seq, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
               workspace_id, environment, actor_id, api_key_id, action, resource_type, resource_id, status,
               request_id, ip_address, user_agent, country_code, metadata::text AS metadata,
               collapse_key IS NOT NULL AS collapsed,
               to_char(erased_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS erased_at,
               personal_digest, prev_hash, entry_hash
        FROM audit_log
        WHERE ${sql.join(conditions, sql.fragment` AND `)}
        ORDER BY seq
        LIMIT ${limit}`);
    },

    /** The seq of the chain's newest entry, 0 when it has none. */
    async lastSeq(tenant: Tenant): Promise<number> {
      return db.oneFirst(sql.type(z.object({ seq: z.coerce.number().int() }))`
        SELECT coalesce(max(seq), 0)::bigint AS seq FROM audit_log
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}`);
    },

    async anchor(tenant: Tenant): Promise<ChainAnchorRow | null> {
      return db.maybeOne(sql.type(chainAnchorRow)`
        SELECT anchor_seq, anchor_hash, anchor_created_at FROM audit_chain_heads
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}`);
    },

    /** The next `limit` links after `afterSeq`, each rechecked by the database against its stored hashes. */
    async chainLinks(tenant: Tenant, afterSeq: number, limit: number): Promise<readonly ChainLinkRow[]> {
      return db.any(sql.type(chainLinkRow)`
        SELECT id, seq, prev_hash, entry_hash, created_at,
               audit_entry_hash(a.*) = entry_hash AS hash_matches,
               CASE WHEN erased_at IS NULL
                    THEN audit_personal_digest(ip_address, user_agent, country_code, metadata) = personal_digest
                    ELSE ip_address IS NULL AND user_agent IS NULL AND country_code IS NULL
                         AND NOT (metadata ?| audit_personal_metadata_keys())
               END AS personal_matches
        FROM audit_log a
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment} AND seq > ${afterSeq}
        ORDER BY seq
        LIMIT ${limit}`);
    },

    /**
     * Deletes up to `limit` of the chain's oldest entries dated before `cutoff` and moves the anchor
     * to the last one deleted. Run inside a transaction: the head row is locked first, as writers do.
     * Returns how many were deleted (0: nothing older is left).
     */
    async purgeOldest(tenant: Tenant, cutoff: Date, limit: number): Promise<number> {
      await db.query(sql.typeAlias('void')`
        SELECT FROM audit_chain_heads
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment} FOR UPDATE`);
      // Entries are dated in chain order (the trigger sees to it), so those older than the cutoff
      // are a prefix of the chain: stop at the first one that is not.
      const oldest = await db.any(sql.type(purgedLinkRow)`
        SELECT seq, entry_hash, created_at FROM audit_log
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
        ORDER BY seq
        LIMIT ${limit}`);
      const firstKept = oldest.findIndex((row) => row.created_at >= cutoff);
      const purged = firstKept === -1 ? oldest : oldest.slice(0, firstKept);
      const last = purged.at(-1);
      if (!last) return 0;
      const deleted = await db.query(sql.typeAlias('void')`
        DELETE FROM audit_log
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment} AND seq <= ${last.seq}`);
      await db.query(sql.typeAlias('void')`
        UPDATE audit_chain_heads
        SET anchor_seq = ${last.seq}, anchor_hash = ${last.entry_hash},
            anchor_created_at = ${sql.timestamp(last.created_at)}
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}`);
      return deleted.rowCount;
    },

    /**
     * Pseudonymises the matching entries of every environment of a workspace: their personal fields
     * and personal metadata keys go, their digest stays, `erased_at` says why they are gone.
     */
    async erasePersonalData(workspaceId: string, match: ErasureMatch): Promise<number> {
      const actorIds = match.actorIds ?? [];
      const ipAddresses = match.ipAddresses ?? [];
      const emails = (match.emails ?? []).map((email) => email.toLowerCase());
      if (actorIds.length === 0 && ipAddresses.length === 0 && emails.length === 0) return 0;
      const erased = await db.query(sql.typeAlias('void')`
        UPDATE audit_log
        SET ip_address = NULL, user_agent = NULL, country_code = NULL,
            metadata = metadata - audit_personal_metadata_keys(),
            -- A collapse key names the client address: it becomes one that names nobody.
            collapse_key = CASE WHEN collapse_key IS NULL THEN NULL ELSE 'erased:' || id END,
            erased_at = ms_now()
        WHERE workspace_id = ${workspaceId} AND erased_at IS NULL
          AND (actor_id = ANY(${sql.array(actorIds, 'uuid')}) OR ip_address = ANY(${sql.array(ipAddresses, 'text')})
            OR EXISTS (
              SELECT 1 FROM jsonb_each_text(metadata) AS m
              WHERE m.key = ANY(audit_personal_metadata_keys()) AND lower(m.value) = ANY(${sql.array(emails, 'text')})))`);
      return erased.rowCount;
    },
  };
}

/** The tenant and the list's filters, as conditions on audit_log. */
function filterConditions(tenant: Tenant, filters: AuditFilters) {
  return [
    sql.fragment`workspace_id = ${tenant.workspaceId}`,
    sql.fragment`environment = ${tenant.environment}`,
    filters.action !== undefined && sql.fragment`action = ${filters.action}`,
    filters.actorId !== undefined && sql.fragment`actor_id = ${filters.actorId}`,
    filters.resourceType !== undefined && sql.fragment`resource_type = ${filters.resourceType}`,
    filters.since !== undefined && sql.fragment`created_at >= ${sql.timestamp(filters.since)}`,
    filters.until !== undefined && sql.fragment`created_at < ${sql.timestamp(filters.until)}`,
  ].filter((c) => c !== false);
}
