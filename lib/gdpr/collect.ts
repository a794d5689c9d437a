import type { CommonQueryMethods, DatabasePool } from 'slonik';
import { z } from 'zod';
import { generateDataKey, type Keyring, unwrapDataKey, wrapDataKey } from '../crypto/key-wrap.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { createGdprExportQueries, type GdprExportRow, gdprExportKeyAad } from '../db/queries/gdpr-exports.ts';
import { createPersonalDataQueries, type Person } from '../db/queries/personal-data.ts';
import { sql } from '../db/sql.ts';
import type { ObjectStore } from '../storage/object-store.ts';
import { DECLARED_TABLES, EXPORTED_FAMILIES } from './declared.ts';
import { exportObjectKey, exportPrefix, partObjectKey } from './objects.ts';
import { exportEventView } from './present.ts';
import { getSealed, putSealed } from './sealed-objects.ts';

// What the gdprExport workflow's activities do (docs/gdpr.md, "Export"): one step per family,
// each reading that family's declared tables (lib/family.ts: personal and exported columns, rows
// found by their subjects) and sealing its part in the object store; then the parts become one
// sealed JSON document, and after its retention it is deleted. Every step may run again.

export type ExportDeps = { db: DatabasePool; objects: ObjectStore; keyring: Keyring };

/** How long a completed export stays downloadable. */
export const EXPORT_RETENTION_MS = 7 * 24 * 3600 * 1000;
/** Rows read per table: an export is a document a person reads, not a backup. */
const ROWS_PER_TABLE = 100_000;

export type ExportPlan = { families: string[] } | null;

/** Starts an export: its data key and the families to collect; null when it is gone or ended. */
export async function beginExport(deps: ExportDeps, id: string): Promise<ExportPlan> {
  const queries = createGdprExportQueries(deps.db);
  const row = await queries.byId(id);
  if (!row) throw new Error(`GDPR export ${id} not found (yet)`);
  const begun = await queries.begin(
    id,
    wrapDataKey(deps.keyring, generateDataKey(), gdprExportKeyAad(id)),
    EXPORTED_FAMILIES.length,
  );
  return begun ? { families: [...EXPORTED_FAMILIES] } : null;
}

function dataKeyOf(keyring: Keyring, row: GdprExportRow): Buffer {
  if (!row.data_key_wrapped) throw new Error(`GDPR export ${row.id} has no data key`);
  return unwrapDataKey(keyring, row.data_key_wrapped, gdprExportKeyAad(row.id));
}

async function personOf(db: CommonQueryMethods, row: GdprExportRow): Promise<Person | null> {
  if (!row.subject_user_id) return null;
  const email = await db.maybeOneFirst(sql.type(z.object({ email: z.string() }))`
    SELECT email FROM users WHERE id = ${row.subject_user_id} AND workspace_id = ${row.workspace_id}`);
  return { userId: row.subject_user_id, emails: email ? [email.toLowerCase()] : [] };
}

/** Collects one family's rows into its sealed part; the count of rows. */
export async function collectFamily(deps: ExportDeps, id: string, family: string, index: number): Promise<number> {
  const exports = createGdprExportQueries(deps.db);
  const row = await exports.byId(id);
  if (row?.status !== 'running') return 0;
  await exports.collecting(id, family, index, EXPORTED_FAMILIES.length);
  const personal = createPersonalDataQueries(deps.db, DECLARED_TABLES);
  const catalog = await personal.catalog();
  const person = await personOf(deps.db, row);
  const scope = { workspaceId: row.workspace_id, environment: row.environment };
  const tables: Record<string, readonly Record<string, unknown>[]> = {};
  let count = 0;
  for (const { family: owner, table, declaration } of DECLARED_TABLES) {
    if (owner !== family || (declaration.personal.length === 0 && !declaration.exported?.length)) continue;
    // A table whose rows name nobody is in a workspace's export, never in one person's.
    if (person && declaration.unattributed) continue;
    const rows = await personal.collect(catalog, table, scope, person, ROWS_PER_TABLE);
    if (rows.length > 0) tables[table] = rows;
    count += rows.length;
  }
  await putSealed(
    deps.objects,
    partObjectKey(row, family),
    dataKeyOf(deps.keyring, row),
    Buffer.from(JSON.stringify(tables)),
  );
  return count;
}

/** Joins the parts into the export's one sealed document, and completes it; its size, or null when it had ended. */
export async function sealExport(deps: ExportDeps, id: string, families: readonly string[]): Promise<number | null> {
  const exports = createGdprExportQueries(deps.db);
  const row = await exports.byId(id);
  if (row?.status !== 'running') return null;
  const key = dataKeyOf(deps.keyring, row);
  const collected: Record<string, unknown> = {};
  for (const family of families) {
    collected[family] = JSON.parse((await getSealed(deps.objects, partObjectKey(row, family), key)).toString('utf8'));
  }
  const document = Buffer.from(
    JSON.stringify({
      object: 'gdpr_export_data',
      export_id: row.id,
      workspace_id: row.workspace_id,
      environment: row.environment,
      user_id: row.subject_user_id,
      generated_at: new Date().toISOString(),
      families: collected,
    }),
  );
  await putSealed(deps.objects, exportObjectKey(row), key, document);
  const completed = await deps.db.transaction(async (tx) => {
    const done = await createGdprExportQueries(tx).complete(id, {
      objectKey: exportObjectKey(row),
      size: document.length,
      retentionUntil: new Date(Date.now() + EXPORT_RETENTION_MS),
    });
    if (done) {
      await createEventQueries(tx).record(
        { workspaceId: done.workspace_id, environment: done.environment },
        'workspace.export_completed',
        { export: exportEventView(done), size: document.length },
      );
    }
    return done;
  });
  await deps.objects.removeMany(families.map((family) => partObjectKey(row, family)));
  return completed ? document.length : null;
}

/** When the export's retention ends (ISO), or null when it is not completed. */
export async function retentionOf(deps: ExportDeps, id: string): Promise<string | null> {
  const row = await createGdprExportQueries(deps.db).byId(id);
  return row?.status === 'completed' && row.retention_until ? row.retention_until.toISOString() : null;
}

/** It failed for good: it says why, and its parts go. */
export async function failExport(deps: ExportDeps, id: string, message: string): Promise<void> {
  const exports = createGdprExportQueries(deps.db);
  await exports.fail(id, message);
  const row = await exports.byId(id);
  if (row) await deps.objects.removePrefix(exportPrefix(row));
}

/** The end of its retention: the data key goes, then the objects. */
export async function expireExport(deps: ExportDeps, id: string): Promise<void> {
  const exports = createGdprExportQueries(deps.db);
  await exports.expire(id);
  const row = await exports.byId(id);
  if (!row) return;
  await deps.objects.removePrefix(exportPrefix(row));
  await exports.markObjectDeleted(id);
}

/** The sealed export's bytes, opened: for the download link. */
export async function openExport(deps: Pick<ExportDeps, 'objects' | 'keyring'>, row: GdprExportRow): Promise<Buffer> {
  if (!row.object_key) throw new Error(`GDPR export ${row.id} has no object`);
  return getSealed(deps.objects, row.object_key, dataKeyOf(deps.keyring, row));
}
