import { createRequire } from 'node:module';
import { setTimeout as delay } from 'node:timers/promises';
import Hapi from '@hapi/hapi';
import type { Caller } from '../lib/tenancy.ts';
import { type CreateTransferInput, createTransfer } from '../lib/transfers/create.ts';
import { listTransfers } from '../lib/transfers/manage.ts';
import { startApi } from '../test/helpers/api.ts';
import type { AutocannonResult } from './load.ts';
import { runContext, writeResults } from './results.ts';
import { UNLIMITED_RATES } from './streaming.ts';

// A steady request rate, not a flood (issue #26, "Load and speed"): GET /v1/transfers and POST
// /v1/transfers with an Idempotency-Key each, at BENCH_RATE requests per second (300) for
// BENCH_RATE_DURATION seconds (60), with p50/p99 corrected for coordinated omission (autocannon's
// overallRate: a late answer delays no request), beside a bare hapi route running the same list
// (lib/transfers/manage.ts, listTransfers: the same queries and presentation) and a bare hapi route
// making the same creation (lib/transfers/create.ts, createTransfer: the transaction and the
// workflow start) in the same run: what the API costs around the query. The API runs in this process, wired as the tests wire it (its
// PostgreSQL, Redis and Temporal are the stack's); autocannon fires from a worker thread. Each
// creation starts its transfer's workflow, which waits for an upload that never comes.
// Usage: sh scripts/node.sh bench/rate.ts    (bench/README.md has the details)

const RATE = Number(process.env.BENCH_RATE ?? '300');
const DURATION_S = Number(process.env.BENCH_RATE_DURATION ?? '60');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? '50');
const SEEDED = Number(process.env.BENCH_SEEDED_TRANSFERS ?? '200');

type Options = {
  url: string;
  method?: string;
  connections: number;
  duration: number;
  overallRate: number;
  headers?: Record<string, string>;
  body?: string;
  idReplacement?: boolean;
  workers: number;
};
// autocannon ships no types; this is the slice of its API used here.
const autocannon = createRequire(import.meta.url)('autocannon') as (options: Options) => Promise<AutocannonResult>;

type Row = {
  route: string;
  target_rps: number;
  achieved_rps: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  status_codes: Record<string, number>;
  errors: number;
};

async function measure(route: string, options: Omit<Options, 'connections' | 'overallRate' | 'workers' | 'duration'>) {
  console.error(`bench: ${route} at ${RATE}/s for ${DURATION_S} s…`);
  const base = { ...options, connections: CONNECTIONS, overallRate: RATE, workers: 1 };
  await autocannon({ ...base, duration: 3 });
  const result = await autocannon({ ...base, duration: DURATION_S });
  await delay(1_000);
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, Number(count)]),
  );
  return {
    route,
    target_rps: RATE,
    achieved_rps: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    max_ms: result.latency.max,
    status_codes: statusCodes,
    errors: result.errors + result.timeouts,
  } satisfies Row;
}

async function main() {
  const startedAt = new Date();
  const api = await startApi(UNLIMITED_RATES);
  const bare = Hapi.server({ host: '127.0.0.1', port: 0 });
  try {
    const ws = await api.workspace('Rate bench');
    const key = ws.keys.live;
    console.error(`bench: seeding ${SEEDED} transfers…`);
    for (let i = 0; i < SEEDED; i++) {
      const made = await api.call('POST', '/v1/transfers', {
        key,
        body: { files: [{ name: `seed-${i}.bin`, size: 10 }] },
      });
      if (made.status !== 201) throw new Error(`seeding: ${made.status} ${made.text}`);
    }
    const me = (await api.call('GET', '/v1/me', { key })).body;
    const caller: Caller = {
      workspaceId: me.workspace.id,
      environment: me.environment,
      userId: me.user.id,
      apiKeyId: me.api_key.id,
      keyType: me.api_key.key_type,
      scopes: me.scopes,
    };
    // The same list, without the API around it: no authentication, rate budget, audit or envelope.
    bare.route({
      method: 'GET',
      path: '/transfers',
      handler: () => listTransfers(api.services, caller, { limit: 20 } as Parameters<typeof listTransfers>[2]),
    });
    // The same creation: its transaction and its workflow's start, without authentication, rate
    // budget, Idempotency-Key, audit, validation or envelope.
    const creation: CreateTransferInput = { files: [{ name: 'rate.bin', size: 10 }] };
    bare.route({
      method: 'POST',
      path: '/transfers',
      handler: async (_request, h) => h.response(await createTransfer(api.services, caller, creation)).code(201),
    });
    await bare.start();

    const auth = { authorization: `Bearer ${key}` };
    const rows: Row[] = [
      await measure('bare hapi: the same list (listTransfers)', {
        url: `http://127.0.0.1:${bare.info.port}/transfers`,
      }),
      await measure('GET /v1/transfers', { url: `${api.url}/v1/transfers`, headers: auth }),
      await measure('bare hapi: the same creation (createTransfer)', {
        url: `http://127.0.0.1:${bare.info.port}/transfers`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      }),
      await measure('POST /v1/transfers (Idempotency-Key)', {
        url: `${api.url}/v1/transfers`,
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': 'rate-[<id>]' },
        body: JSON.stringify({ files: [{ name: 'rate.bin', size: 10 }] }),
        idReplacement: true,
      }),
    ];
    const markdown = [
      `| route (${RATE}/s for ${DURATION_S} s, ${CONNECTIONS} connections) | achieved req/s | p50 ms | p99 ms | max ms | statuses | errors |`,
      '|---|---:|---:|---:|---:|---|---:|',
      ...rows.map(
        (r) =>
          `| ${r.route} | ${r.achieved_rps} | ${r.p50_ms} | ${r.p99_ms} | ${r.max_ms} | ${Object.entries(r.status_codes)
            .map(([code, count]) => `${code}: ${count}`)
            .join(', ')} | ${r.errors} |`,
      ),
    ].join('\n');
    console.log(markdown);
    const file = writeResults('rate', startedAt, {
      ...runContext(startedAt),
      settings: { rate: RATE, duration_s: DURATION_S, connections: CONNECTIONS, seeded_transfers: SEEDED },
      rows,
      markdown,
    });
    console.error(`bench: wrote ${file}`);
    const bad = rows.filter((r) => r.errors > 0 || Object.keys(r.status_codes).some((code) => !code.startsWith('2')));
    if (bad.length > 0) throw new Error(`answers other than 2xx: ${bad.map((r) => r.route).join(', ')}`);
  } finally {
    await bare.stop();
    await api.close();
  }
}

await main();
