import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { StoredFiles } from '../../family.ts';
import type { Tenant } from '../../tenancy.ts';
import { sql } from '../sql.ts';
import { type StoredFile, storedFileColumns, storedFileRow } from './stored-files.ts';

// What the purge of a tenant's expired data (lib/retention/purge.ts) reads and deletes, for any
// family's declared tables: table and column names come from the declarations and from
// pg_catalog, never from a request. Every statement is bounded by the tenant and by a batch.

/** A foreign key that deletes its rows with the row it references (ON DELETE CASCADE). */
export type CascadeEdge = { table: string; columns: string[]; parent: string; parentColumns: string[] };

const cascadeEdge = z.object({
  table: z.string(),
  columns: z.array(z.string()),
  parent: z.string(),
  parentColumns: z.array(z.string()),
});

/** A fragment that is true for a row (under `alias`) whose purge is due. */
export type DuePredicate = (alias: string) => ReturnType<typeof sql.fragment>;

/** Each purged table's age column (tenant tables), and the tables whose rows a purge may remove. */
export type PurgeTables = { ages: ReadonlyMap<string, string>; purged: ReadonlySet<string> };

/** Cascade chains followed upwards at most this far (the schema's deepest is three). */
const MAX_DEPTH = 8;

/**
 * When a row of `table` goes in a purge as of `cutoff`: it is older than the cutoff itself, or a
 * row it cascades from goes (a young intake document of an old intake, a young vault item of an
 * old vault). The stored objects of such rows must go before them.
 */
export function duePredicate(
  table: string,
  tables: PurgeTables,
  edges: readonly CascadeEdge[],
  cutoff: Date,
): DuePredicate {
  const build = (current: string, alias: string, depth: number): ReturnType<typeof sql.fragment> => {
    const reasons: ReturnType<typeof sql.fragment>[] = [];
    const age = tables.ages.get(current);
    if (age) reasons.push(sql.fragment`${sql.identifier([alias, age])} < ${sql.timestamp(cutoff)}`);
    if (depth < MAX_DEPTH) {
      for (const edge of edges) {
        if (edge.table !== current || edge.parent === current || !tables.purged.has(edge.parent)) continue;
        const parentAlias = `${alias}_${depth}`;
        const joined = edge.columns.map(
          (column, i) =>
            sql.fragment`${sql.identifier([parentAlias, edge.parentColumns[i] ?? column])} = ${sql.identifier([alias, column])}`,
        );
        reasons.push(sql.fragment`EXISTS (SELECT 1 FROM ${sql.identifier([edge.parent])} AS ${sql.identifier([parentAlias])}
          WHERE ${sql.join(joined, sql.fragment` AND `)} AND ${build(edge.parent, parentAlias, depth + 1)})`);
      }
    }
    return reasons.length === 0 ? sql.fragment`false` : sql.fragment`(${sql.join(reasons, sql.fragment` OR `)})`;
  };
  return (alias) => build(table, alias, 0);
}

export function createRetentionQueries(db: CommonQueryMethods) {
  return {
    /** Every ON DELETE CASCADE foreign key of the schema, with its columns in order. */
    async cascadeEdges(): Promise<readonly CascadeEdge[]> {
      return db.any(sql.type(cascadeEdge)`
        SELECT child.relname AS table, parent.relname AS parent,
          array(SELECT attname::text FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, n)
            JOIN pg_catalog.pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY n) AS columns,
          array(SELECT attname::text FROM unnest(c.confkey) WITH ORDINALITY AS k(attnum, n)
            JOIN pg_catalog.pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY n) AS "parentColumns"
        FROM pg_catalog.pg_constraint c
        JOIN pg_catalog.pg_class child ON child.oid = c.conrelid
        JOIN pg_catalog.pg_class parent ON parent.oid = c.confrelid
        JOIN pg_catalog.pg_namespace ns ON ns.oid = child.relnamespace
        WHERE c.contype = 'f' AND c.confdeltype = 'c' AND ns.nspname = current_schema()
        ORDER BY child.relname, c.conname`);
    },

    /** Up to `limit` workspaces after `after` (by id), for a purge that visits them all. */
    async workspacesAfter(after: string | null, limit: number): Promise<readonly string[]> {
      return db.anyFirst(sql.type(z.object({ id: z.string() }))`
        SELECT id::text AS id FROM workspaces
        WHERE ${after === null ? sql.fragment`true` : sql.fragment`id > ${after}`}
        ORDER BY id LIMIT ${limit}`);
    },

    /**
     * Locks up to `limit` owners of `files` in `tenant` whose purge is due, until the transaction
     * ends (a file row cannot be added to a locked owner: its foreign key waits), and answers
     * their ids with their stored files, locked too.
     */
    async lockDueOwners(
      files: StoredFiles,
      tenant: Tenant,
      due: DuePredicate,
      limit: number,
    ): Promise<{ ownerIds: readonly string[]; files: readonly StoredFile[] }> {
      const owner = sql.identifier([files.ownerTable]);
      const ownerIds = await db.anyFirst(sql.type(z.object({ id: z.string() }))`
        SELECT o.id::text AS id FROM ${owner} AS o
        WHERE o.workspace_id = ${tenant.workspaceId} AND o.environment = ${tenant.environment} AND ${due('o')}
        LIMIT ${limit} FOR UPDATE OF o`);
      if (ownerIds.length === 0) return { ownerIds, files: [] };
      const stored = await db.any(sql.type(storedFileRow)`
        SELECT ${storedFileColumns} FROM ${sql.identifier([files.filesTable])}
        WHERE ${sql.identifier([files.ownerColumn])} IN (
          SELECT o.id FROM ${owner} AS o
          WHERE o.workspace_id = ${tenant.workspaceId} AND o.environment = ${tenant.environment}
            AND o.id::text = ANY(${sql.array([...ownerIds], 'text')}))
        FOR UPDATE`);
      return { ownerIds, files: stored };
    },

    /** Deletes owners by id in `tenant` (their file rows and children go by cascade); answers how many. */
    async deleteOwners(files: StoredFiles, tenant: Tenant, ownerIds: readonly string[]): Promise<number> {
      return db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
        WITH gone AS (
          DELETE FROM ${sql.identifier([files.ownerTable])}
          WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
            AND id::text = ANY(${sql.array([...ownerIds], 'text')})
          RETURNING 1)
        SELECT count(*) AS count FROM gone`);
    },

    /**
     * Whether any of `ages`' tables (table -> age column) has a row of `tenant` older than
     * `cutoff`: one statement, so that a purge passes over an empty sandbox at the cost of one.
     */
    async hasExpired(ages: ReadonlyMap<string, string>, tenant: Tenant, cutoff: Date): Promise<boolean> {
      const probes = [...ages].map(
        ([table, age]) => sql.fragment`EXISTS (SELECT 1 FROM ${sql.identifier([table])}
          WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
            AND ${sql.identifier([age])} < ${sql.timestamp(cutoff)})`,
      );
      if (probes.length === 0) return false;
      return db.oneFirst(sql.type(z.object({ expired: z.boolean() }))`
        SELECT ${sql.join(probes, sql.fragment` OR `)} AS expired`);
    },

    /**
     * Deletes up to `limit` rows of a tenant-scoped `table` in `tenant` older than `cutoff` by
     * `age`, by their physical addresses (any primary key shape); answers how many.
     */
    async deleteExpired(table: string, age: string, tenant: Tenant, cutoff: Date, limit: number): Promise<number> {
      const target = sql.identifier([table]);
      return db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
        WITH gone AS (
          DELETE FROM ${target} WHERE ctid = ANY(ARRAY(
            SELECT ctid FROM ${target}
            WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
              AND ${sql.identifier([age])} < ${sql.timestamp(cutoff)}
            LIMIT ${limit} FOR UPDATE))
          RETURNING 1)
        SELECT count(*) AS count FROM gone`);
    },
  };
}
