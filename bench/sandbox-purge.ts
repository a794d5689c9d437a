import { randomUUID } from 'node:crypto';
import { DeleteObjectsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { loadConfig } from '../lib/config.ts';
import { deriveKey } from '../lib/crypto/secrets.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { sql } from '../lib/db/sql.ts';
import { inParallel } from '../lib/in-parallel.ts';
import { purgeTenant } from '../lib/retention/purge.ts';
import { createObjectStore } from '../lib/storage/object-store.ts';
import type { Tenant } from '../lib/tenancy.ts';
import { bootstrapWorkspace } from '../lib/workspaces/bootstrap.ts';
import { runContext, writeResults } from './results.ts';

// The sandbox purge's time on one sandbox of 10,000 rows and 1,000 objects, all 25 hours old:
// 1,000 transfers with one stored file each (1,000 objects of 1 KiB), 4,000 folders and 4,000
// audit entries. The purge is lib/retention/purge.ts's purgeTenant, as the purgeSandbox
// workflow's activity runs it. The ceiling, in the same run, on a second sandbox seeded alike: one
// raw DELETE per table of the same rows, and raw S3 DeleteObjects of the same keys (1,000 per call).
// Usage: sh scripts/node.sh bench/sandbox-purge.ts    (bench/README.md has the details)

const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 1_000);
const FOLDERS = Number(process.env.BENCH_FOLDERS ?? 4_000);
const AUDIT = Number(process.env.BENCH_AUDIT ?? 4_000);
const OBJECT_BYTES = 1_024;

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const count = z.object({ count: z.coerce.number() });

type Objects = ReturnType<typeof createObjectStore>;

/** One sandbox seeded with the bench's rows, 25 hours old, and their objects; answers its tenant and keys. */
async function seed(db: DatabasePool, objects: Objects, workspaceId: string, userId: string) {
  const tenant: Tenant = { workspaceId, environment: 'sandbox' };
  const old = sql.fragment`ms_now() - interval '25 hours'`;
  const transferIds = await db.anyFirst(sql.type(z.object({ id: z.string() }))`
    INSERT INTO transfers (workspace_id, environment, user_id, short_code, status, encryption_mode, expires_at,
      upload_deadline, created_at)
    SELECT ${workspaceId}, 'sandbox', ${userId}, 'b' || replace(gen_random_uuid()::text, '-', ''), 'active', 'server',
      ms_now() + interval '1 day', ms_now(), ${old}
    FROM generate_series(1, ${TRANSFERS})
    RETURNING id::text AS id`);
  const keys = await db.anyFirst(sql.type(z.object({ key: z.string() }))`
    INSERT INTO transfer_files (transfer_id, position, name, size, mime_type, object_key, upload_state, created_at)
    SELECT t, 0, 'bench.bin', ${OBJECT_BYTES}, 'application/octet-stream',
      'sandbox/' || ${workspaceId} || '/' || t || '/' || gen_random_uuid(), 'uploaded', ${old}
    FROM unnest(${sql.array([...transferIds], 'uuid')}) AS t
    RETURNING object_key AS key`);
  await db.query(sql.typeAlias('void')`
    INSERT INTO folders (workspace_id, environment, name, created_at)
    SELECT ${workspaceId}, 'sandbox', 'bench ' || n, ${old} FROM generate_series(1, ${FOLDERS}) AS n`);
  await db.query(sql.typeAlias('void')`
    INSERT INTO audit_log (workspace_id, environment, action, status, created_at)
    SELECT ${workspaceId}, 'sandbox', 'bench.seed', 'success', ${old} FROM generate_series(1, ${AUDIT})`);
  const body = Buffer.alloc(OBJECT_BYTES, 7);
  await inParallel(keys, 16, async (Key) => {
    await objects.client.send(new PutObjectCommand({ Bucket: objects.bucket, Key, Body: body }));
  });
  return { tenant, keys };
}

async function rowsOf(db: DatabasePool, tenant: Tenant): Promise<number> {
  return db.oneFirst(sql.type(count)`
    SELECT (SELECT count(*) FROM transfers WHERE workspace_id = ${tenant.workspaceId} AND environment = 'sandbox')
      + (SELECT count(*) FROM transfer_files f JOIN transfers t ON t.id = f.transfer_id
         WHERE t.workspace_id = ${tenant.workspaceId} AND t.environment = 'sandbox')
      + (SELECT count(*) FROM folders WHERE workspace_id = ${tenant.workspaceId} AND environment = 'sandbox')
      + (SELECT count(*) FROM audit_log WHERE workspace_id = ${tenant.workspaceId} AND environment = 'sandbox') AS count`);
}

const elapsed = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

async function main() {
  const startedAt = new Date();
  const config = loadConfig();
  const db = await createDatabasePool(config.database.url, 10);
  const objects = createObjectStore(config.s3);
  const keys = {
    apiKeyPepper: deriveKey(config.secret, 'api-key-hash'),
    seal: deriveKey(config.secret, 'seal'),
    links: deriveKey(config.secret, 'link-token'),
  };
  const bootstrap = (name: string) =>
    bootstrapWorkspace(db, keys, { workspaceName: name, ownerEmail: `bench-${randomUUID()}@valise.test` });

  const purged = await bootstrap('Bench sandbox purge');
  const raw = await bootstrap('Bench sandbox raw delete');
  log('seeding');
  const a = await seed(db, objects, purged.workspace_id, purged.user_id);
  const b = await seed(db, objects, raw.workspace_id, raw.user_id);
  const seededRows = await rowsOf(db, a.tenant);
  log(`seeded ${seededRows} rows and ${a.keys.length} objects per sandbox`);

  const cutoff = new Date(Date.now() - 24 * 3_600_000);
  let start = process.hrtime.bigint();
  const counts = await purgeTenant({ db, objects }, { tenant: a.tenant, cutoff });
  const purgeMs = elapsed(start);
  const leftRows = await rowsOf(db, a.tenant);
  log(`purge: ${purgeMs.toFixed(0)} ms, ${JSON.stringify(counts)}, ${leftRows} rows left`);

  // What a run pays for each workspace whose sandbox has nothing to purge (the same one, now empty).
  start = process.hrtime.bigint();
  await purgeTenant({ db, objects }, { tenant: a.tenant, cutoff });
  const emptyMs = elapsed(start);

  start = process.hrtime.bigint();
  for (let i = 0; i < b.keys.length; i += 1_000) {
    await objects.client.send(
      new DeleteObjectsCommand({
        Bucket: objects.bucket,
        Delete: { Objects: b.keys.slice(i, i + 1_000).map((Key) => ({ Key })), Quiet: true },
      }),
    );
  }
  const rawObjectsMs = elapsed(start);
  start = process.hrtime.bigint();
  for (const table of ['transfers', 'folders', 'audit_log']) {
    await db.query(sql.typeAlias('void')`
      DELETE FROM ${sql.identifier([table])} WHERE workspace_id = ${b.tenant.workspaceId} AND environment = 'sandbox'`);
  }
  const rawRowsMs = elapsed(start);
  log(`raw: objects ${rawObjectsMs.toFixed(0)} ms, rows ${rawRowsMs.toFixed(0)} ms`);

  const report = {
    ...runContext(startedAt),
    settings: { transfers: TRANSFERS, folders: FOLDERS, audit: AUDIT, object_bytes: OBJECT_BYTES },
    rows: seededRows,
    objects: a.keys.length,
    purge_ms: Math.round(purgeMs),
    purge_counts: counts,
    empty_sandbox_purge_ms: Math.round(emptyMs),
    rows_left: leftRows,
    ceiling: { delete_objects_ms: Math.round(rawObjectsMs), delete_rows_ms: Math.round(rawRowsMs) },
  };
  const file = writeResults('sandbox-purge', startedAt, report);
  process.stdout.write(`| run | rows | objects | time |
|---|---:|---:|---:|
| purgeTenant (objects, then rows in batches) | ${seededRows} | ${a.keys.length} | ${(purgeMs / 1000).toFixed(2)} s |
| purgeTenant of an empty sandbox | 0 | 0 | ${(emptyMs / 1000).toFixed(3)} s |
| ceiling: raw DeleteObjects (1,000 a call) | | ${b.keys.length} | ${(rawObjectsMs / 1000).toFixed(2)} s |
| ceiling: raw DELETE per table | ${seededRows} | | ${(rawRowsMs / 1000).toFixed(2)} s |
| ceiling: both | | | ${((rawObjectsMs + rawRowsMs) / 1000).toFixed(2)} s |

${file}
`);
  for (const workspace of [purged, raw]) {
    await db.query(sql.typeAlias('void')`DELETE FROM workspaces WHERE id = ${workspace.workspace_id}`);
  }
  await db.end();
  objects.client.destroy();
  if (leftRows !== 0) process.exitCode = 1;
}

await main();
