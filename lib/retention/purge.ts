import type { DatabasePool } from 'slonik';
import { type CascadeEdge, createRetentionQueries, duePredicate, type PurgeTables } from '../db/queries/retention.ts';
import { FAMILIES } from '../families.ts';
import type { Family, PurgeScope, StoredFiles } from '../family.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { removeBlobs } from '../storage/remove-blob.ts';

// The retention contract's engine (lib/family.ts, FamilyRetention): purges one tenant's rows older
// than a cutoff from every family's declared tables, iterating FAMILIES, so a new family is purged
// without an edit here. The sandbox purge (workflows/purgeSandbox.ts) runs it on every
// workspace's sandbox with a cutoff 24 hours back (docs/sandbox-purge.md).
//
// Order, and why:
// 1. Stored objects first. Every owner of a declared `storedFiles` that goes in this purge, old
//    itself or cascading from an old row (a young document of an old intake), is locked with its
//    file rows, its objects deleted, then its row deleted, in one transaction per batch. An object
//    whose row is gone could never be found again (nothing else knows its key), while a row whose
//    object is gone only fails a download of data about to vanish; and the lock keeps an upload
//    from adding a file to an owner between the two. The transaction holds the locks only for one
//    batch of S3 deletes.
// 2. Then the rows, table by table, children before parents (the cascade foreign keys, read from
//    pg_catalog), so that a parent's DELETE rarely finds children left to cascade to, and no
//    statement deletes more than a batch. Tables declared `child` go with their parents.
// A family with its own `retention.purge` purges its tables itself, at its first table's turn.

export type PurgeDeps = {
  db: DatabasePool;
  objects: ObjectStore;
  /** Called between batches (an activity's heartbeat). */
  progress?: () => void;
  batchSize?: number;
};

/** Rows deleted, by table (an owner's count includes its objects' rows), and objects deleted. */
export type PurgeCounts = { rows: Record<string, number>; objects: number };

const DEFAULT_BATCH = 500;

/** The tables a purge deletes from, and their age columns, from the declarations. */
export function purgeTables(families: readonly Family[] = FAMILIES): PurgeTables {
  const ages = new Map<string, string>();
  const purged = new Set<string>();
  for (const family of families) {
    for (const [table, { scope, age }] of Object.entries(family.tables)) {
      if (scope.kind === 'tenant' && age !== null) ages.set(table, age ?? 'created_at');
      if (scope.kind === 'tenant' || scope.kind === 'child') purged.add(table);
    }
  }
  return { ages, purged };
}

/**
 * The tenant tables in deletion order: a table before every table it cascades from, directly or
 * through child tables; ties (and any cycle) in declaration order.
 */
export function deletionOrder(families: readonly Family[], edges: readonly CascadeEdge[]): string[] {
  const { ages, purged } = purgeTables(families);
  const declared = families.flatMap((family) => Object.keys(family.tables)).filter((table) => purged.has(table));
  const parents = new Map<string, Set<string>>();
  for (const edge of edges) {
    if (edge.table === edge.parent || !purged.has(edge.table) || !purged.has(edge.parent)) continue;
    parents.set(edge.table, (parents.get(edge.table) ?? new Set()).add(edge.parent));
  }
  // Depth-first: a table is placed once every table cascading from it is.
  const children = new Map<string, string[]>();
  for (const [child, of] of parents)
    for (const parent of of) children.set(parent, [...(children.get(parent) ?? []), child]);
  const placed = new Set<string>();
  const visiting = new Set<string>();
  const order: string[] = [];
  const place = (table: string) => {
    if (placed.has(table) || visiting.has(table)) return;
    visiting.add(table);
    for (const child of children.get(table) ?? []) place(child);
    visiting.delete(table);
    placed.add(table);
    order.push(table);
  };
  for (const table of declared) place(table);
  return order.filter((table) => ages.has(table));
}

/** Purges `scope.tenant`'s rows older than `scope.cutoff`, with their stored objects, in every family. */
export async function purgeTenant(
  deps: PurgeDeps,
  scope: PurgeScope,
  families: readonly Family[] = FAMILIES,
): Promise<PurgeCounts> {
  const batchSize = deps.batchSize ?? DEFAULT_BATCH;
  const progress = deps.progress ?? (() => {});
  const tables = purgeTables(families);
  const counts: PurgeCounts = { rows: {}, objects: 0 };
  // Every row that goes is old itself or cascades from an old one: no old row, nothing to do.
  if (!(await createRetentionQueries(deps.db).hasExpired(tables.ages, scope.tenant, scope.cutoff))) return counts;
  const edges = await createRetentionQueries(deps.db).cascadeEdges();
  const add = (table: string, n: number) => {
    counts.rows[table] = (counts.rows[table] ?? 0) + n;
  };

  for (const files of families.flatMap((family) => family.storedFiles ?? [])) {
    const due = duePredicate(files.ownerTable, tables, edges, scope.cutoff);
    let deleted: number;
    do {
      deleted = await purgeOwnersBatch(deps, files, scope, due, Math.max(1, Math.floor(batchSize / 2)), (n) => {
        counts.objects += n;
      });
      add(files.ownerTable, deleted);
      progress();
    } while (deleted > 0);
  }

  const familyOf = new Map(families.flatMap((family) => Object.keys(family.tables).map((t) => [t, family] as const)));
  const overridden = new Set<Family>();
  for (const table of deletionOrder(families, edges)) {
    const family = familyOf.get(table);
    const own = family?.retention?.purge;
    if (family && own) {
      if (overridden.has(family)) continue;
      overridden.add(family);
      add(family.name, await own({ db: deps.db, objects: deps.objects, batchSize, progress }, scope));
      progress();
      continue;
    }
    const age = tables.ages.get(table) ?? 'created_at';
    let deleted: number;
    do {
      deleted = await createRetentionQueries(deps.db).deleteExpired(table, age, scope.tenant, scope.cutoff, batchSize);
      add(table, deleted);
      progress();
    } while (deleted === batchSize);
  }
  return counts;
}

/** One batch of due owners: their objects deleted, then their rows, under their locks. Answers the owners deleted. */
async function purgeOwnersBatch(
  deps: PurgeDeps,
  files: StoredFiles,
  scope: PurgeScope,
  due: ReturnType<typeof duePredicate>,
  limit: number,
  objectsDeleted: (n: number) => void,
): Promise<number> {
  return deps.db.transaction(async (tx) => {
    const queries = createRetentionQueries(tx);
    const locked = await queries.lockDueOwners(files, scope.tenant, due, limit);
    if (locked.ownerIds.length === 0) return 0;
    await removeBlobs(deps.objects, locked.files);
    objectsDeleted(locked.files.length);
    return queries.deleteOwners(files, scope.tenant, locked.ownerIds);
  });
}
