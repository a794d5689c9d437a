import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { loadConfig } from '../lib/config.ts';
import { deriveKey } from '../lib/crypto/secrets.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { bootstrapWorkspace } from '../lib/workspaces/bootstrap.ts';
import {
  type RunningProcess,
  startApiProcess,
  startBalancer,
  startNodeProcess,
} from '../test/helpers/api-processes.ts';
import {
  CONNECTIONS,
  DURATION_S,
  failOnBadResponses,
  measure,
  type Row,
  type Servers,
  table,
  WARMUP_S,
} from './load.ts';
import { runContext, writeResults } from './results.ts';
import { benchedApiEnv } from './streaming.ts';

// Scaled out on one machine: GET /v1/me and GET /v1/api-keys served by API_PROCESSES child
// processes behind haproxy (ops/haproxy/valise.cfg, as scripts/scale.sh runs it), beside one
// process alone and bare hapi (its own process too), alone and behind the same haproxy (the
// balancer's own ceiling), in one run. Every API process is `node api/main.ts` with its own pools,
// caches and event loop. Each row also reports the CPU time its serving processes spent per
// request, which other work on the machine hardly moves.
// Usage: sh scripts/node.sh bench/scale.ts    (bench/README.md has the details)

const API_PROCESSES = Number(process.env.BENCH_API_PROCESSES ?? '2');

async function main() {
  const config = loadConfig();
  const env = {
    REDIS_PREFIX: `valise-bench:${randomBytes(6).toString('hex')}:`,
    TRUST_PROXY_HOPS: '1',
    TRUSTED_PROXIES: '127.0.0.1,::1',
    ...benchedApiEnv(),
  };
  const started: RunningProcess[] = [];
  const db = await createDatabasePool(config.database.url, 2);

  try {
    const ws = await bootstrapWorkspace(
      db,
      { apiKeyPepper: deriveKey(config.secret, 'api-key-hash'), seal: deriveKey(config.secret, 'seal') },
      { workspaceName: 'Bench scale', ownerEmail: `bench-${randomBytes(4).toString('hex')}@example.com` },
    );
    const bare = await startNodeProcess('bench/bare-hapi.ts', {}, '/ok');
    started.push(bare);
    const processes = await Promise.all(Array.from({ length: API_PROCESSES }, () => startApiProcess(env)));
    started.push(...processes);
    const [one] = processes;
    if (!one) throw new Error('BENCH_API_PROCESSES must be at least 1');
    // Each stopped at the end even if a later one fails to start.
    const balanced = await startBalancer(processes);
    started.push(balanced);
    const bareBalanced = await startBalancer([bare], '/ok');
    started.push(bareBalanced);
    const all = processes.map((p) => p.pid);

    const auth = { authorization: `Bearer ${ws.keys.live}` };
    for (const api of processes)
      for (const path of ['/v1/me', '/v1/api-keys']) {
        const probe = await api.call('GET', path, { key: ws.keys.live });
        if (probe.status !== 200) throw new Error(`GET ${path} answered ${probe.status}: ${probe.text}`);
      }

    const startedAt = new Date();
    const loadBefore = loadavg();
    console.error(
      `bench: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s per target, ${API_PROCESSES} API processes, load average ${loadBefore.map((n) => n.toFixed(2)).join(' ')}`,
    );
    const rows: Row[] = [];
    const targets: [string, string, Record<string, string>, Servers][] = [
      ['bare hapi GET /ok', `${bare.url}/ok`, {}, { hapi: [bare.pid] }],
      ['haproxy → bare hapi GET /ok', `${bareBalanced.url}/ok`, {}, { hapi: [bare.pid], haproxy: [bareBalanced.pid] }],
      ['GET /v1/me, 1 process', `${one.url}/v1/me`, auth, { api: [one.pid] }],
      [
        `GET /v1/me, haproxy → ${API_PROCESSES} processes`,
        `${balanced.url}/v1/me`,
        auth,
        { api: all, haproxy: [balanced.pid] },
      ],
      ['GET /v1/api-keys, 1 process', `${one.url}/v1/api-keys`, auth, { api: [one.pid] }],
      [
        `GET /v1/api-keys, haproxy → ${API_PROCESSES} processes`,
        `${balanced.url}/v1/api-keys`,
        auth,
        { api: all, haproxy: [balanced.pid] },
      ],
    ];
    for (const [route, url, headers, servers] of targets) {
      console.error(`bench: ${route}…`);
      rows.push(await measure(route, url, headers, servers));
    }

    const markdown = table(rows);
    console.log(markdown);
    const report = {
      ...runContext(startedAt),
      settings: {
        duration_s: DURATION_S,
        warmup_s: WARMUP_S,
        connections: CONNECTIONS,
        api_processes: API_PROCESSES,
        database_pool: config.database.poolSize,
      },
      load_average: { before: loadBefore, after: loadavg() },
      rows,
      markdown,
    };
    console.error(`bench: wrote ${writeResults('scale', startedAt, report)}`);
    failOnBadResponses(rows);
  } finally {
    await Promise.all(started.map((running) => running.stop()));
    await db.end();
  }
}

await main();
