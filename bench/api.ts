import { createRequire } from 'node:module';
import { setTimeout as delay } from 'node:timers/promises';
import Hapi from '@hapi/hapi';
import { startApi } from '../test/helpers/api.ts';
import { temporalServerInfo } from '../test/helpers/temporal-server.ts';
import { runContext, writeResults } from './results.ts';

// Throughput and latency of GET /v1/me and GET /v1/api-keys on the real stack
// (PostgreSQL, Redis, Temporal), side by side with a bare hapi route in the
// same run, so the numbers read as "what the API costs on top of hapi".
// Usage: sh scripts/node.sh bench/api.ts    (bench/README.md has the details)
//
// The API runs in this process, wired exactly as the tests wire it; autocannon
// fires from a worker thread so the load generator does not share the
// server's event loop.

const DURATION_S = Number(process.env.BENCH_DURATION ?? '10');
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? '2');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? '10');
const HUGE = '1000000000';
const SETTLE_MS = 1_000;

type Histogram = { average: number; p50: number; p99: number; max: number; total?: number };
type AutocannonResult = {
  requests: Histogram;
  latency: Histogram;
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats?: Record<string, { count: number }>;
};
type AutocannonOptions = {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
  workers?: number;
};
type Autocannon = (options: AutocannonOptions) => Promise<AutocannonResult>;

// autocannon ships no types; this is the slice of its API used here.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

type Row = {
  route: string;
  requests_per_second: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  requests: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  status_codes: Record<string, number>;
};

async function measure(route: string, url: string, headers: Record<string, string>): Promise<Row> {
  const base = { url, connections: CONNECTIONS, headers, workers: 1 };
  if (WARMUP_S > 0) await autocannon({ ...base, duration: WARMUP_S });
  const result = await autocannon({ ...base, duration: DURATION_S });
  // autocannon resolves without waiting for the requests still in flight (one per
  // connection); let them finish so they neither overlap the next target nor
  // hit a closing database pool at the end.
  await delay(SETTLE_MS);
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, Number(count)]),
  );
  const requests = Object.values(statusCodes).reduce((sum, n) => sum + n, 0);
  return {
    route,
    requests_per_second: round(result.requests.average),
    p50_ms: round(result.latency.p50),
    p99_ms: round(result.latency.p99),
    max_ms: round(result.latency.max),
    requests,
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    status_codes: statusCodes,
  };
}

const round = (n: number) => Math.round(n * 100) / 100;
/** autocannon records whole milliseconds: 0 means under one. */
const ms = (n: number) => (n < 1 ? '<1' : String(n));

function table(rows: Row[]): string {
  const lines = [
    '| route | req/s | p50 ms | p99 ms | non-2xx |',
    '|---|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.route} | ${r.requests_per_second.toFixed(0)} | ${ms(r.p50_ms)} | ${ms(r.p99_ms)} | ${r.non_2xx + r.errors} |`,
    ),
  ];
  return lines.join('\n');
}

async function main() {
  const api = await startApi({
    RATE_LIMIT_READ: HUGE,
    RATE_LIMIT_WRITE: HUGE,
    RATE_LIMIT_EXPENSIVE: HUGE,
    RATE_LIMIT_PUBLIC: HUGE,
  });
  const bare = Hapi.server({ host: '127.0.0.1', port: 0 });
  bare.route({ method: 'GET', path: '/ok', handler: () => ({ ok: true }) });
  await bare.start();

  try {
    const ws = await api.workspace('Bench');
    const auth = { authorization: `Bearer ${ws.keys.live}` };
    for (const path of ['/v1/me', '/v1/api-keys']) {
      const probe = await api.call('GET', path, { key: ws.keys.live });
      if (probe.status !== 200) throw new Error(`GET ${path} answered ${probe.status}: ${probe.text}`);
    }

    console.error(
      `bench: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s per route, autocannon in a worker thread`,
    );
    const startedAt = new Date();
    const rows: Row[] = [];
    for (const [route, url, headers] of [
      ['bare hapi GET /ok', `http://127.0.0.1:${bare.info.port}/ok`, {}],
      ['GET /v1/me', `${api.url}/v1/me`, auth],
      ['GET /v1/api-keys', `${api.url}/v1/api-keys`, auth],
    ] as const) {
      console.error(`bench: ${route}…`);
      rows.push(await measure(route, url, headers));
    }

    const markdown = table(rows);
    console.log(markdown);

    const report = {
      ...runContext(startedAt),
      // The API's Temporal client is on this one (VALISE_TEMPORAL: the dev server or the server on PostgreSQL).
      temporal: await temporalServerInfo(api.services.config.temporal.address),
      settings: {
        duration_s: DURATION_S,
        warmup_s: WARMUP_S,
        connections: CONNECTIONS,
        database_pool: api.services.config.database.poolSize,
      },
      rows,
      markdown,
    };
    const file = writeResults('api', startedAt, report);
    console.error(`bench: wrote ${file}`);

    const failed = rows.filter((r) => r.non_2xx > 0 || r.errors > 0);
    if (failed.length > 0) {
      console.error(
        `bench: non-2xx responses or errors, the numbers are not valid: ${failed
          .map((r) => `${r.route} ${JSON.stringify(r.status_codes)} errors=${r.errors}`)
          .join('; ')}`,
      );
      process.exitCode = 1;
    }
  } finally {
    await bare.stop();
    await api.close();
  }
}

await main();
