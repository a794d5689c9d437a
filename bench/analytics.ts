import { isDeepStrictEqual } from 'node:util';
import type { CommonQueryMethods } from 'slonik';
import { loadConfig } from '../lib/config.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { sql } from '../lib/db/sql.ts';
import { countryOf } from '../lib/net/country.ts';
import { runContext, writeResults } from './results.ts';
import { log, round, startChildApi, timed } from './streaming.ts';
import { type BenchWorkspace, createBenchWorkspaces, deleteBenchWorkspaces } from './workspaces.ts';

// The analytics routes (docs/analytics.md) over BENCH_ANALYTICS_DOWNLOADS counted downloads
// (default 1,000,000: each one a `transfer.downloaded` event and its transfer_downloads row) across
// BENCH_ANALYTICS_TRANSFERS transfers (default 10,000) in one workspace, and a tenth as many in
// another (noise every query must skip). Rows are generated with SQL (generate_series) straight
// into the tables the routes read, downloads in time order in batches of 20,000: the rollups of
// migrations 0036 and 0039 are kept by their triggers on transfer_downloads, as for every download
// the API records; then the tables are vacuumed, as autovacuum would. Each route is called
// BENCH_ANALYTICS_CALLS times (default 200) through the API as a child process, p50 and p99
// reported, and its answer compared with a plain SQL recomputation from the raw rows, written
// independently of lib/db/queries/analytics.ts: they must be identical. Then BENCH_LIST_ROWS
// (default 1,000,000) transfers and audit entries are added to the workspace and GET /v1/transfers
// and GET /v1/audit are timed the same way.
// Usage: sh scripts/node.sh bench/analytics.ts (bench/README.md, "Analytics"); the workspaces it
// makes are deleted at the end, unless BENCH_KEEP=1.

const TRANSFERS = Number(process.env.BENCH_ANALYTICS_TRANSFERS ?? 10_000);
const DOWNLOADS = Number(process.env.BENCH_ANALYTICS_DOWNLOADS ?? 1_000_000);
const CALLS = Number(process.env.BENCH_ANALYTICS_CALLS ?? 200);
const LIST_ROWS = Number(process.env.BENCH_LIST_ROWS ?? 1_000_000);
/** BENCH_KEEP=1 leaves the workspaces and their rows, for EXPLAIN in psql. */
const KEEP = process.env.BENCH_KEEP === '1';
const BATCH = 100_000;
// Downloads are recorded in smaller statements: each one's triggers group its rows twelve times per span rollup.
const DOWNLOAD_BATCH = 20_000;
const DAY_MS = 86_400_000;

type Db = Awaited<ReturnType<typeof createDatabasePool>>;
type Workspace = BenchWorkspace;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

/** One connection without the pool's statement timeout: generating a million rows on a busy machine takes longer. */
async function withoutTimeout(db: Db, work: (connection: CommonQueryMethods) => Promise<void>) {
  await db.connect(async (connection) => {
    await connection.query(sql.typeAlias('void')`SET statement_timeout = 0`);
    try {
      await work(connection);
    } finally {
      await connection.query(sql.typeAlias('void')`RESET statement_timeout`);
    }
  });
}

/** Transfers spread over the last 40 days, their files, recipients, downloads and completed deliveries. */
async function generate(db: CommonQueryMethods, ws: Workspace, run: string, transfers: number, downloads: number) {
  const wid = ws.workspace_id;
  await db.query(sql.typeAlias('void')`
    INSERT INTO transfers (workspace_id, environment, user_id, short_code, status, encryption_mode, expires_at,
                           upload_deadline, recipient, transfer_title, created_at, activated_at)
    SELECT ${wid}, 'live', ${ws.user_id}, ${`b${run}`} || ${wid.slice(0, 4)} || g, 'active', 'server',
           now() + interval '30 days', now(),
           CASE WHEN g % 4 = 0 THEN 'to' || (g % 700) || '@bench.example' END, 'Bench ' || g,
           date_trunc('milliseconds', now() - random() * interval '40 days'), now()
    FROM generate_series(1, ${transfers}) g`);
  const own = sql.fragment`SELECT id, created_at, row_number() OVER (ORDER BY id) AS n FROM transfers
    WHERE workspace_id = ${wid} AND environment = 'live'`;
  await db.query(sql.typeAlias('void')`
    INSERT INTO transfer_files (transfer_id, position, name, size, mime_type, object_key, upload_state, uploaded_at)
    SELECT t.id, p, 'file-' || p || '.bin', 1000 + (t.n * 7919 + p) % 5000000, 'application/octet-stream',
           'bench/' || t.id || '/' || p, CASE WHEN t.n % 20 = 0 THEN 'pending' ELSE 'uploaded' END, t.created_at
    FROM (${own}) t, generate_series(1, 1 + (t.n % 3)::int) p`);
  await db.query(sql.typeAlias('void')`
    INSERT INTO transfer_recipients (workspace_id, environment, transfer_id, email, position, share_code,
                                     downloads_completed, created_at)
    SELECT ${wid}, 'live', t.id, 'r' || ((t.n * 13 + k) % 3000) || '@bench.example', k,
           ${`rc${run}`} || ${wid.slice(0, 4)} || t.n || '_' || k, (t.n + k) % 4, t.created_at
    FROM (${own}) t, generate_series(0, 1) k`);
  // Completed grants through personal links on one transfer in ten, covering every file.
  await db.query(sql.typeAlias('void')`
    WITH grants AS (
      INSERT INTO recipient_grants (grant_id, transfer_recipient_id, completed_at, created_at)
      SELECT gen_random_uuid(), r.id, r.created_at + interval '1 hour', r.created_at + interval '1 hour'
      FROM transfer_recipients r JOIN (${own}) t ON t.id = r.transfer_id
      WHERE t.n % 10 = 0 AND r.position = 0
      RETURNING grant_id, transfer_recipient_id)
    INSERT INTO recipient_deliveries (grant_id, file_id, size, delivered_through, completed_at)
    SELECT g.grant_id, f.id, f.size, f.size, now()
    FROM grants g JOIN transfer_recipients r ON r.id = g.transfer_recipient_id
    JOIN transfer_files f ON f.transfer_id = r.transfer_id`);
  // Downloads skewed towards a few transfers (the top lists have a shape), from 2,000 addresses,
  // public and private, each after its transfer's creation. Drawn first into a staging table, then
  // recorded in the order of their instants, in batches, as the API records them: the table's rows
  // lie in time order, as a real one's do.
  const staging = sql.identifier([`bench_analytics_downloads_${run}_${wid.slice(0, 8)}`]);
  const batches = Math.max(1, Math.ceil(downloads / DOWNLOAD_BATCH));
  await db.query(sql.typeAlias('void')`
    CREATE UNLOGGED TABLE ${staging} AS
    WITH numbered AS (${own})
    SELECT drawn.*, ntile(${batches}) OVER (ORDER BY drawn.at) AS batch FROM (
    SELECT t.id AS transfer_id, a.ip, date_trunc('milliseconds', t.created_at + random() * (now() - t.created_at)) AS at
    FROM (SELECT 1 + floor(power(random(), 3) * ${transfers})::int AS n, (random() * 1999)::int AS x
          FROM generate_series(1, ${downloads})) pick
    JOIN numbered t ON t.n = pick.n
    CROSS JOIN LATERAL (SELECT (1 + pick.x % 223) || '.' || (pick.x * 7 % 256) || '.' || (pick.x * 13 % 256)
                               || '.' || (1 + pick.x % 250) AS ip) a) drawn`);
  try {
    for (let i = 0; i < batches; i++) {
      await db.query(sql.typeAlias('void')`
        INSERT INTO transfer_downloads (transfer_id, ip_address, user_agent, created_at)
        SELECT s.transfer_id, s.ip, 'bench', s.at FROM ${staging} s WHERE s.batch = ${i + 1} ORDER BY s.at`);
      log(`  batch ${i + 1} / ${batches} of ${downloads} downloads`);
    }
  } finally {
    await db.query(sql.typeAlias('void')`DROP TABLE ${staging}`);
  }
  await db.query(sql.typeAlias('void')`
    UPDATE transfers t SET total_downloads = d.n
    FROM (SELECT transfer_id, count(*) AS n FROM transfer_downloads GROUP BY transfer_id) d
    WHERE d.transfer_id = t.id AND t.workspace_id = ${wid}`);
}

/** The routes' answers recomputed from the raw rows, each its own plain query. */
async function recompute(db: Db, wid: string, since: string, until: string, tz: string) {
  // Plain SQL text, as someone checking by hand would type it (the values are this bench's own).
  const q = (text: string) => {
    const parts = Object.assign([text], { raw: Object.freeze([text]) });
    return db.any(sql.unsafe(Object.freeze(parts) as unknown as TemplateStringsArray));
  };
  const T = `t.workspace_id = '${wid}' AND t.environment = 'live'`;
  const CREATED = `${T} AND t.created_at >= '${since}' AND t.created_at < '${until}'`;
  const DL = `d.created_at >= '${since}' AND d.created_at < '${until}'`;
  const [totals] = await q(`
    SELECT
      (SELECT count(*)::int FROM transfers t WHERE ${CREATED}) AS transfers_created,
      (SELECT coalesce(sum(f.size), 0)::bigint FROM transfers t JOIN transfer_files f ON f.transfer_id = t.id
        WHERE ${CREATED} AND f.upload_state = 'uploaded') AS bytes_sent,
      (SELECT count(*)::int FROM transfers t JOIN transfer_downloads d ON d.transfer_id = t.id WHERE ${T} AND ${DL}) AS downloads,
      (SELECT count(DISTINCT e)::int FROM (
         SELECT lower(r.email) e FROM transfers t JOIN transfer_recipients r ON r.transfer_id = t.id WHERE ${CREATED}
         UNION SELECT lower(t.recipient) FROM transfers t WHERE ${CREATED} AND t.recipient IS NOT NULL) u) AS unique_recipients,
      (SELECT count(*)::int FROM transfers t WHERE ${CREATED}
         AND EXISTS (SELECT 1 FROM transfer_downloads d WHERE d.transfer_id = t.id)) AS downloaded,
      (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY w) FROM (
         SELECT extract(epoch FROM min(d.created_at) - t.created_at) w FROM transfers t
         JOIN transfer_downloads d ON d.transfer_id = t.id WHERE ${CREATED} GROUP BY t.id, t.created_at) m) AS median`);
  const days = await q(`
    SELECT to_char(day, 'YYYY-MM-DD') AS date,
      (SELECT count(*)::int FROM transfers t WHERE ${CREATED}
         AND date_trunc('day', t.created_at AT TIME ZONE '${tz}') = day) AS transfers_created,
      (SELECT coalesce(sum(f.size), 0)::bigint FROM transfers t JOIN transfer_files f ON f.transfer_id = t.id
         WHERE ${CREATED} AND f.upload_state = 'uploaded' AND date_trunc('day', t.created_at AT TIME ZONE '${tz}') = day) AS bytes_sent,
      (SELECT count(*)::int FROM transfers t JOIN transfer_downloads d ON d.transfer_id = t.id WHERE ${T} AND ${DL}
         AND date_trunc('day', d.created_at AT TIME ZONE '${tz}') = day) AS downloads
    FROM generate_series(date_trunc('day', '${since}'::timestamptz AT TIME ZONE '${tz}'),
                         date_trunc('day', ('${until}'::timestamptz - interval '1 ms') AT TIME ZONE '${tz}'),
                         interval '1 day') day ORDER BY day`);
  const t0 = totals as Record<string, number | string | null>;
  const created = Number(t0.transfers_created);
  const summary = {
    object: 'analytics_summary',
    since,
    until,
    tz,
    transfers_created: created,
    bytes_sent: Number(t0.bytes_sent),
    downloads: Number(t0.downloads),
    unique_recipients: Number(t0.unique_recipients),
    median_seconds_to_first_download: t0.median === null ? null : Number(t0.median),
    completion_rate: created === 0 ? null : Number(t0.downloaded) / created,
    days: days.map((d) => ({
      ...(d as Record<string, unknown>),
      bytes_sent: Number((d as { bytes_sent: unknown }).bytes_sent),
    })),
  };

  const addresses = await q(`SELECT d.ip_address, count(*)::int AS n FROM transfers t
    JOIN transfer_downloads d ON d.transfer_id = t.id WHERE ${T} AND ${DL} GROUP BY d.ip_address`);
  const countries = new Map<string | null, { downloads: number; visitors: number }>();
  for (const a of addresses as Array<{ ip_address: string | null; n: number }>) {
    const c = countryOf(a.ip_address);
    const e = countries.get(c) ?? { downloads: 0, visitors: 0 };
    e.downloads += a.n;
    e.visitors += a.ip_address === null ? 0 : 1;
    countries.set(c, e);
  }
  const geo = {
    object: 'analytics_geo',
    since,
    until,
    tz,
    countries: [...countries]
      .map(([country_code, e]) => ({ country_code, ...e }))
      .sort((a, b) => b.downloads - a.downloads || (a.country_code ?? '~').localeCompare(b.country_code ?? '~')),
  };

  // Each transfer of the window asked, one by one, how far it went.
  const [f] = (await q(`WITH reached AS (
      SELECT NOT EXISTS (SELECT 1 FROM transfer_files x WHERE x.transfer_id = t.id AND x.upload_state <> 'uploaded') AS uploaded,
             EXISTS (SELECT 1 FROM transfer_downloads d WHERE d.transfer_id = t.id) AS downloaded,
             EXISTS (SELECT 1 FROM transfer_recipients r JOIN recipient_grants g ON g.transfer_recipient_id = r.id
                     WHERE r.transfer_id = t.id AND g.completed_at IS NOT NULL
                       AND (SELECT count(*) FROM recipient_deliveries v WHERE v.grant_id = g.grant_id AND v.completed_at IS NOT NULL)
                         = (SELECT count(*) FROM transfer_files x WHERE x.transfer_id = t.id)) AS whole
      FROM transfers t WHERE ${CREATED})
    SELECT count(*)::int AS created, count(*) FILTER (WHERE uploaded)::int AS uploaded,
           count(*) FILTER (WHERE uploaded AND downloaded)::int AS first_download,
           count(*) FILTER (WHERE uploaded AND downloaded AND whole)::int AS all_files
    FROM reached`)) as Array<Record<string, number>>;
  const counts = [f?.created ?? 0, f?.uploaded ?? 0, f?.first_download ?? 0, f?.all_files ?? 0];
  const ratio = (a: number, b: number) => (b === 0 ? null : a / b);
  const funnel = {
    object: 'analytics_funnel',
    since,
    until,
    tz,
    steps: ['created', 'uploaded', 'first_download', 'all_files_downloaded'].map((step, i) => ({
      step,
      count: counts[i] ?? 0,
      conversion: ratio(counts[i] ?? 0, counts[Math.max(0, i - 1)] ?? 0),
      overall: ratio(counts[i] ?? 0, counts[0] ?? 0),
    })),
  };

  const cells = await q(`SELECT extract(isodow FROM d.created_at AT TIME ZONE '${tz}')::int AS weekday,
      extract(hour FROM d.created_at AT TIME ZONE '${tz}')::int AS hour, count(*)::int AS downloads
    FROM transfers t JOIN transfer_downloads d ON d.transfer_id = t.id WHERE ${T} AND ${DL} GROUP BY 1, 2 ORDER BY 1, 2`);
  const heatmap = { object: 'analytics_heatmap', since, until, tz, cells };

  const topT = await q(`SELECT t.id, t.short_code, t.transfer_title,
      to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at, count(*)::int AS downloads
    FROM transfers t JOIN transfer_downloads d ON d.transfer_id = t.id WHERE ${T} AND ${DL}
    GROUP BY t.id ORDER BY downloads DESC, t.id LIMIT 10`);
  const topTransfers = { object: 'analytics_top_transfers', since, until, tz, transfers: topT };
  const topR = await q(`SELECT lower(r.email) AS email, count(DISTINCT r.transfer_id)::int AS transfers,
      sum(r.downloads_completed)::int AS downloads
    FROM transfers t JOIN transfer_recipients r ON r.transfer_id = t.id WHERE ${CREATED}
    GROUP BY 1 ORDER BY downloads DESC, email LIMIT 10`);
  const topRecipients = { object: 'analytics_top_recipients', since, until, tz, recipients: topR };
  return { summary, geo, funnel, heatmap, topTransfers, topRecipients };
}

/** `calls` sequential GETs of `path`; p50 and p99 in ms, and the last answer. */
async function time(url: string, key: string, path: string, calls: number) {
  const ms: number[] = [];
  let body: unknown;
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    body = await response.json();
    ms.push(performance.now() - started);
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(body)}`);
  }
  ms.sort((a, b) => a - b);
  return { p50: round(percentile(ms, 50), 1), p99: round(percentile(ms, 99), 1), body };
}

/** Adds `count` old transfers and audit entries to the workspace, for the list routes. */
async function addListRows(db: CommonQueryMethods, ws: Workspace, run: string, count: number) {
  for (let done = 0; done < count; done += BATCH) {
    const batch = Math.min(BATCH, count - done);
    await db.query(sql.typeAlias('void')`
      INSERT INTO transfers (workspace_id, environment, user_id, short_code, status, encryption_mode, expires_at,
                             upload_deadline, created_at)
      SELECT ${ws.workspace_id}, 'live', ${ws.user_id}, ${`l${run}_${done}_`} || g, 'expired', 'server', now(), now(),
             date_trunc('milliseconds', now() - interval '400 days' - g * interval '1 second')
      FROM generate_series(1, ${batch}) g`);
    await db.query(sql.typeAlias('void')`
      INSERT INTO audit_log (workspace_id, environment, actor_id, action, resource_type, resource_id,
                             ip_address, user_agent, country_code, status, request_id, metadata)
      SELECT ${ws.workspace_id}, 'live', ${ws.user_id}, 'transfer.create', 'transfer', gen_random_uuid()::text,
             '203.0.113.' || (g % 250), 'bench', NULL, 'success', 'req_' || md5(g::text), '{}'::jsonb
      FROM generate_series(1, ${batch}) g`);
    log(`  ${done + batch} / ${count} transfers and audit entries`);
  }
}

async function main() {
  const startedAt = new Date();
  const config = loadConfig();
  const db = await createDatabasePool(config.database.url, 2);
  const { run, measured, noise } = await createBenchWorkspaces(db, config, 'analytics');
  let stopApi: (() => Promise<void>) | null = null;
  try {
    log(`generating ${TRANSFERS} transfers and ${DOWNLOADS} downloads, and a tenth as many elsewhere…`);
    const generated = await timed(async () => {
      await withoutTimeout(db, async (connection) => {
        await generate(connection, measured, run, TRANSFERS, DOWNLOADS);
        await generate(connection, noise, run, Math.ceil(TRANSFERS / 10), Math.ceil(DOWNLOADS / 10));
        // What autovacuum leaves after a million inserts (it vacuums an insert-mostly table every
        // 20% of new rows): statistics, and pages marked all-visible, which index-only scans need.
        await connection.query(sql.typeAlias('void')`VACUUM (ANALYZE) transfers, transfer_files, transfer_downloads,
          transfer_recipients, recipient_grants, recipient_deliveries, analytics_download_quarters,
          analytics_transfer_spans, analytics_address_spans, analytics_first_downloads`);
      });
    });
    const child = await startChildApi();
    stopApi = child.stop;
    const until = new Date(Math.floor(Date.now() / 1000) * 1000);
    const since = new Date(until.getTime() - 30 * DAY_MS);
    const tz = 'Asia/Kolkata';
    const window = `since=${since.toISOString()}&until=${until.toISOString()}&tz=${encodeURIComponent(tz)}`;
    const expected = await recompute(db, measured.workspace_id, since.toISOString(), until.toISOString(), tz);
    const routes = [
      ['GET /v1/analytics', `/v1/analytics?${window}`, expected.summary],
      ['GET /v1/analytics/geo', `/v1/analytics/geo?${window}`, expected.geo],
      ['GET /v1/analytics/funnel', `/v1/analytics/funnel?${window}`, expected.funnel],
      ['GET /v1/analytics/heatmap', `/v1/analytics/heatmap?${window}`, expected.heatmap],
      ['GET /v1/analytics/top-transfers', `/v1/analytics/top-transfers?${window}`, expected.topTransfers],
      ['GET /v1/analytics/top-recipients', `/v1/analytics/top-recipients?${window}`, expected.topRecipients],
    ] as const;
    const rows: Array<{ route: string; p50_ms: number; p99_ms: number; identical: boolean | string }> = [];
    for (const [name, path, want] of routes) {
      log(`${name}: ${CALLS} calls…`);
      const measuredRoute = await time(child.url, measured.keys.live, path, CALLS);
      const identical = isDeepStrictEqual(
        JSON.parse(JSON.stringify(measuredRoute.body)),
        JSON.parse(JSON.stringify(want)),
      );
      if (!identical) {
        log(
          `${name} differs from the recomputation:\n  api: ${JSON.stringify(measuredRoute.body).slice(0, 800)}\n  sql: ${JSON.stringify(want).slice(0, 800)}`,
        );
      }
      rows.push({ route: name, p50_ms: measuredRoute.p50, p99_ms: measuredRoute.p99, identical });
    }
    if (LIST_ROWS > 0) {
      log(`adding ${LIST_ROWS} transfers and audit entries to the workspace…`);
      await withoutTimeout(db, (connection) => addListRows(connection, measured, run, LIST_ROWS));
      await db.query(sql.typeAlias('void')`ANALYZE transfers, audit_log`);
      for (const [name, path] of [
        ['GET /v1/transfers', '/v1/transfers?limit=100'],
        ['GET /v1/audit', '/v1/audit?limit=100'],
      ] as const) {
        log(`${name}: ${CALLS} calls…`);
        const listed = await time(child.url, measured.keys.live, path, CALLS);
        rows.push({
          route: `${name} (${LIST_ROWS} more rows)`,
          p50_ms: listed.p50,
          p99_ms: listed.p99,
          identical: '-',
        });
      }
    }
    const markdown = [
      `${TRANSFERS} transfers, ${DOWNLOADS} downloads (and a tenth as many in another workspace), generated in ${round(generated.seconds, 1)} s; ${CALLS} sequential calls per route, window of 30 days in ${tz}.`,
      '',
      '| route | p50 ms | p99 ms | identical to SQL |',
      '|---|---:|---:|---|',
      ...rows.map((r) => `| ${r.route} | ${r.p50_ms} | ${r.p99_ms} | ${r.identical} |`),
    ].join('\n');
    // Printed before the clean-up, which may take minutes with a million rows to delete.
    console.log(markdown);
    return {
      startedAt,
      report: {
        ...runContext(startedAt),
        settings: { transfers: TRANSFERS, downloads: DOWNLOADS, calls: CALLS, list_rows: LIST_ROWS },
        generate_seconds: round(generated.seconds, 1),
        rows,
        markdown,
      },
    };
  } finally {
    await stopApi?.();
    if (KEEP) log(`kept the generated rows: workspace ${measured.workspace_id} (delete it when done)`);
    else await deleteBenchWorkspaces(db, [measured, noise]);
    await db.end();
  }
}

const { startedAt, report } = await main();
log(`wrote ${writeResults('analytics', startedAt, report)}`);
