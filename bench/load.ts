import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setTimeout as delay } from 'node:timers/promises';

// The load generator the request benches share (bench/api.ts, bench/scale.ts): autocannon from a
// worker thread, so that it does not share the event loop of a server it measures, a warm-up
// before each measured run, and one table row per target.

export const DURATION_S = Number(process.env.BENCH_DURATION ?? '10');
export const WARMUP_S = Number(process.env.BENCH_WARMUP ?? '2');
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? '10');
const SETTLE_MS = 1_000;

export type Histogram = { average: number; p50: number; p99: number; max: number; total?: number };
export type AutocannonResult = {
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

export type Row = {
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
  /** CPU time the serving processes spent per request during the measured run, by role (µs). */
  server_cpu_us_per_request?: Record<string, number>;
};

/**
 * Processes whose CPU time a row reports, by role ({api: [pid, pid], haproxy: [pid]}): unlike
 * requests/s, CPU per request hardly moves when other work shares the machine.
 */
export type Servers = Record<string, number[]>;

export async function measure(
  route: string,
  url: string,
  headers: Record<string, string>,
  servers: Servers = {},
): Promise<Row> {
  const base = { url, connections: CONNECTIONS, headers, workers: 1 };
  if (WARMUP_S > 0) await autocannon({ ...base, duration: WARMUP_S });
  const cpuBefore = cpuSeconds(servers);
  const result = await autocannon({ ...base, duration: DURATION_S });
  // autocannon resolves without waiting for the requests still in flight (one per
  // connection); let them finish so they neither overlap the next target nor
  // hit a closing database pool at the end.
  await delay(SETTLE_MS);
  const cpuAfter = cpuSeconds(servers);
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
    ...(Object.keys(servers).length > 0
      ? {
          server_cpu_us_per_request: Object.fromEntries(
            Object.keys(servers).map((role) => [
              role,
              Math.round((((cpuAfter[role] ?? 0) - (cpuBefore[role] ?? 0)) * 1e6) / Math.max(1, requests)),
            ]),
          ),
        }
      : {}),
  };
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** User and system CPU seconds of each role's processes, from /proc/<pid>/stat. */
function cpuSeconds(servers: Servers): Record<string, number> {
  return Object.fromEntries(
    Object.entries(servers).map(([role, pids]) => [
      role,
      pids.reduce((sum, pid) => {
        // The fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
        const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
          .replace(/^.*\) /s, '')
          .split(' ');
        return sum + (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
      }, 0),
    ]),
  );
}

const round = (n: number) => Math.round(n * 100) / 100;
/** autocannon records whole milliseconds: 0 means under one. */
const ms = (n: number) => (n < 1 ? '<1' : String(n));

export function table(rows: Row[]): string {
  const withCpu = rows.some((r) => r.server_cpu_us_per_request);
  const cpu = (r: Row) =>
    Object.entries(r.server_cpu_us_per_request ?? {})
      .map(([role, us]) => `${role} ${us}`)
      .join(' + ');
  const lines = [
    `| route | req/s | p50 ms | p99 ms | non-2xx |${withCpu ? ' server CPU µs/request |' : ''}`,
    `|---|---:|---:|---:|---:|${withCpu ? '---:|' : ''}`,
    ...rows.map(
      (r) =>
        `| ${r.route} | ${r.requests_per_second.toFixed(0)} | ${ms(r.p50_ms)} | ${ms(r.p99_ms)} | ${r.non_2xx + r.errors} |${withCpu ? ` ${cpu(r)} |` : ''}`,
    ),
  ];
  return lines.join('\n');
}

/** A run with any non-2xx response or error measured something else: say which, and fail the bench. */
export function failOnBadResponses(rows: Row[]): void {
  const failed = rows.filter((r) => r.non_2xx > 0 || r.errors > 0);
  if (failed.length === 0) return;
  console.error(
    `bench: non-2xx responses or errors, the numbers are not valid: ${failed
      .map((r) => `${r.route} ${JSON.stringify(r.status_codes)} errors=${r.errors}`)
      .join('; ')}`,
  );
  process.exitCode = 1;
}
