import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { loadConfig } from '../lib/config.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { sql } from '../lib/db/sql.ts';
import { runContext, writeResults } from './results.ts';
import { log, mib, type Row, round, row, sampled, startChildApi, timed } from './streaming.ts';
import { createBenchWorkspaces, deleteBenchWorkspaces } from './workspaces.ts';

// GET /v1/audit/export over a large audit log (docs/audit.md, "Export"): BENCH_AUDIT_ENTRIES
// entries (default 1,000,000) in one workspace's live chain, inserted through the chaining trigger,
// and a tenth as many in another workspace (noise the export must skip), then the export as NDJSON
// and as CSV through the API (a child process whose RSS is sampled), beside its ceiling in the same
// run: `psql` running `COPY (the same rows) TO STDOUT`. Also times GET /v1/audit/verify over the
// chain. Usage: sh scripts/node.sh bench/audit-export.ts (bench/README.md, "Audit export"); the
// workspaces it makes are deleted at the end.

const ENTRIES = Number(process.env.BENCH_AUDIT_ENTRIES ?? 1_000_000);
const NOISE = Math.ceil(ENTRIES / 10);
const INSERT_BATCH = 100_000;

type Transferred = { bytes: number; lines: number; status: number };

/** GETs `path` with the key and counts what comes back, without keeping it. */
function download(url: string, key: string): Promise<Transferred> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'identity' } }, (res) => {
      let bytes = 0;
      let lines = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      });
      res.on('end', () => resolve({ bytes, lines, status: res.statusCode ?? 0 }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** `psql -c "COPY (query) TO STDOUT …"`: what PostgreSQL alone sends of the same rows, counted. */
async function psqlCopy(databaseUrl: string, query: string, format: 'text' | 'csv'): Promise<Transferred> {
  const options = format === 'csv' ? 'WITH (FORMAT csv, HEADER)' : '';
  const child = spawn('psql', [databaseUrl, '-X', '-q', '-c', `COPY (${query}) TO STDOUT ${options}`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let bytes = 0;
  let lines = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`psql exited with ${code}`);
  return { bytes, lines, status: 0 };
}

async function main() {
  const startedAt = new Date();
  const config = loadConfig();
  const db = await createDatabasePool(config.database.url, 2);
  const { measured, noise } = await createBenchWorkspaces(db, config, 'audit export');
  let stopApi: (() => Promise<void>) | null = null;
  try {
    const insert = async (workspaceId: string, userId: string, count: number) => {
      for (let done = 0; done < count; done += INSERT_BATCH) {
        const batch = Math.min(INSERT_BATCH, count - done);
        // What a request's entry looks like: an actor, a resource, a public address, a user agent.
        await db.query(sql.typeAlias('void')`
          INSERT INTO audit_log (workspace_id, environment, actor_id, action, resource_type, resource_id,
                                 ip_address, user_agent, country_code, status, request_id, metadata)
          SELECT ${workspaceId}, 'live', ${userId}, 'transfer.create', 'transfer', gen_random_uuid()::text,
                 '203.0.113.' || (g % 250), 'valise-cli/1.0 (linux; node 24)', NULL, 'success',
                 'req_' || md5(g::text), jsonb_build_object('status_code', 201, 'n', g)
          FROM generate_series(1, ${batch}) AS g`);
        log(`  ${done + batch} / ${count}`);
      }
    };
    log(`inserting ${ENTRIES} entries through the chaining trigger, and ${NOISE} in another workspace…`);
    const inserted = await timed(() => insert(measured.workspace_id, measured.user_id, ENTRIES));
    await insert(noise.workspace_id, noise.user_id, NOISE);
    await db.query(sql.typeAlias('void')`ANALYZE audit_log`);

    const child = await startChildApi();
    stopApi = child.stop;
    const key = measured.keys.live;
    const rows: Row[] = [];
    const rss = [];
    const entriesOf = `SELECT id, seq, created_at, workspace_id, environment, actor_id, api_key_id, action, resource_type,
      resource_id, status, request_id, ip_address, user_agent, country_code, metadata, collapse_key IS NOT NULL,
      erased_at, personal_digest, prev_hash, entry_hash FROM audit_log
      WHERE workspace_id = '${measured.workspace_id}' AND environment = 'live' ORDER BY seq`;

    for (const format of ['ndjson', 'csv'] as const) {
      log(`${format} export through the API…`);
      const exported = await sampled(child.pid, `${format} export`, () =>
        download(`${child.url}/v1/audit/export?format=${format}`, key),
      );
      // Each export is audited, so a later one also carries the earlier ones' entries (and CSV a header).
      if (exported.value.status !== 200 || exported.value.lines < ENTRIES) {
        throw new Error(`${format}: status ${exported.value.status}, ${exported.value.lines} lines`);
      }
      rows.push({
        ...row(`Valise export, ${format}`, exported.value.bytes, exported.seconds),
        rows_per_s: Math.round(ENTRIES / exported.seconds),
      } as Row);
      rss.push(exported.rss);
    }
    for (const format of ['text', 'csv'] as const) {
      log(`psql COPY … TO STDOUT (${format})…`);
      const copied = await timed(() => psqlCopy(config.database.url, entriesOf, format));
      rows.push({
        ...row(`psql COPY TO STDOUT, ${format}`, copied.value.bytes, copied.seconds),
        rows_per_s: Math.round(ENTRIES / copied.seconds),
      } as Row);
    }
    log('GET /v1/audit/verify over the chain…');
    const verified = await sampled(child.pid, 'verify', async () => {
      const response = await fetch(`${child.url}/v1/audit/verify`, { headers: { authorization: `Bearer ${key}` } });
      return (await response.json()) as { valid: boolean; entries_checked: number };
    });
    if (!verified.value.valid) throw new Error(`the chain does not verify: ${JSON.stringify(verified.value)}`);
    rss.push(verified.rss);

    const perRow = (r: Row & { rows_per_s?: number }) => r.rows_per_s ?? '';
    const markdown = [
      `Insert through the trigger: ${ENTRIES} entries in ${round(inserted.seconds, 1)} s (${Math.round(ENTRIES / inserted.seconds)} rows/s).`,
      `Verify: ${verified.value.entries_checked} entries in ${round(verified.seconds, 1)} s (${Math.round(verified.value.entries_checked / verified.seconds)} entries/s).`,
      '',
      '| measure | bytes | seconds | MB/s | rows/s |',
      '|---|---:|---:|---:|---:|',
      ...rows.map((r) => `| ${r.measure} | ${r.bytes} | ${r.seconds} | ${r.mb_per_s} | ${perRow(r)} |`),
      '',
      '| API RSS (MiB) | baseline | peak (100 ms samples) | peak − baseline | kernel peak (VmHWM) |',
      '|---|---:|---:|---:|---:|',
      ...rss.map(
        (r) =>
          `| ${r.phase} | ${mib(r.baseline_kib)} | ${mib(r.peak_kib)} | ${mib(r.growth_kib)} | ${r.kernel_peak_kib === null ? 'n/a' : mib(r.kernel_peak_kib)} |`,
      ),
    ].join('\n');
    return {
      startedAt,
      report: {
        ...runContext(startedAt),
        settings: { entries: ENTRIES, noise: NOISE },
        insert_seconds: round(inserted.seconds, 2),
        verify_seconds: round(verified.seconds, 2),
        rows,
        rss,
        markdown,
      },
    };
  } finally {
    await stopApi?.();
    await deleteBenchWorkspaces(db, [measured, noise]);
    await db.end();
  }
}

const { startedAt, report } = await main();
console.log(report.markdown);
log(`wrote ${writeResults('audit-export', startedAt, report)}`);
