import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, openSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { DatabasePool } from 'slonik';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../lib/config.ts';
import { deriveKey, seal } from '../lib/crypto/secrets.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { createWebhookQueries } from '../lib/db/queries/webhooks.ts';
import { generateWebhookSecret } from '../lib/webhooks/signature.ts';
import { bootstrapWorkspace } from '../lib/workspaces/bootstrap.ts';
import { standInTransferCreated } from '../test/helpers/dispatch.ts';
import { gitCommit, writeResults } from './results.ts';
import { measureTemporalCeiling } from './temporal-ceiling.ts';

// Signed webhook deliveries through the whole pipeline: events recorded in
// PostgreSQL, the worker's dispatcher queueing a delivery per (event, webhook),
// the sender's signed POST, the attempt recorded. A local receiver on loopback
// notes when each delivery arrives. The ceiling, in the same run: the same
// number of bare POSTs from this process to the same receiver, as many at once
// as the sender makes, with nothing else around them.
// Usage: sh scripts/node.sh bench/webhooks.ts    (bench/README.md has the details)

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? 5);
const STEADY_RATE = Number(process.env.BENCH_STEADY_RATE ?? 50); // events per second
const STEADY_SECONDS = Number(process.env.BENCH_STEADY_SECONDS ?? 20);
/** Workers on the bench's task queue, each with its dispatcher (scaled out: scripts/scale.sh runs two). */
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
const INSERT_BATCH = 500;
const CEILING_POSTS = Number(process.env.BENCH_CEILING_POSTS ?? 20_000);
const CEILING_CONCURRENCY = 128; // SENDER_CONCURRENCY (lib/webhooks/sender.ts)
const VERIFY_EVERY = 100; // the receiver checks one signature in this many with `standardwebhooks`
const DRAIN_TIMEOUT_MS = 60 * 60_000;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

type Arrival = { eventId: string; path: string; at: number };

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function startReceiver(secrets: Map<string, string>) {
  const arrivals: Arrival[] = [];
  let badSignatures = 0;
  let seen = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const at = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      const path = request.url ?? '/';
      const eventId = String(request.headers['webhook-id']);
      if (path !== '/ceiling' && seen++ % VERIFY_EVERY === 0) {
        try {
          const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
          new Webhook(secrets.get(path) ?? '').verify(body, headers);
        } catch {
          badSignatures++;
        }
      }
      arrivals.push({ eventId, path, at });
      response.writeHead(204).end();
    });
  });
  // Real receivers keep connections open; so does the worker's agent.
  server.keepAliveTimeout = 10_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { port, arrivals, badSignatures: () => badSignatures, close: () => server.close() };
}

/** One of the bench's own workers (dispatcher and activities), its output in bench/results/webhooks-worker-<n>.log. */
function startWorker(taskQueue: string, n: number): ChildProcess {
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  const output = openSync(join(ROOT, `bench/results/webhooks-worker-${n}.log`), 'w');
  return spawn('sh', ['scripts/node.sh', 'workers/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      TEMPORAL_TASK_QUEUE: taskQueue,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      // The worker's CPU profile, written when it stops (bench/profile-summary.ts reads it).
      ...(process.env.BENCH_CPU_PROF_DIR
        ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}` }
        : {}),
    },
    stdio: ['ignore', output, output],
  });
}

/** Bare keep-alive POSTs of a delivery-sized body to the receiver: what Node's HTTP alone does here. */
async function ceiling(port: number, arrivals: Arrival[]) {
  const agent = new Agent({ keepAlive: true, maxSockets: CEILING_CONCURRENCY });
  const body = JSON.stringify({ id: 'evt_ceiling', type: 'transfer.created', data: standInTransferCreated() });
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    while (next++ < CEILING_POSTS) {
      await new Promise<void>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port, path: '/ceiling', method: 'POST', agent, headers: { 'webhook-id': 'ceiling' } },
          (res) => res.resume().on('end', resolve).on('error', reject),
        );
        req.on('error', reject);
        req.end(body);
      });
    }
  };
  await Promise.all(Array.from({ length: CEILING_CONCURRENCY }, lane));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  arrivals.length = 0;
  return { posts: CEILING_POSTS, seconds: round(seconds, 2), posts_per_second: round(CEILING_POSTS / seconds) };
}

async function recordEvents(db: DatabasePool, tenant: { workspaceId: string; environment: 'live' }, count: number) {
  const createdAt = new Map<string, number>();
  for (let done = 0; done < count; done += INSERT_BATCH) {
    const rows = await db.transaction(async (tx) => {
      const events = createEventQueries(tx);
      const out = [];
      for (let i = done; i < Math.min(count, done + INSERT_BATCH); i++) {
        out.push(await events.record(tenant, 'transfer.created', standInTransferCreated()));
      }
      return out;
    });
    for (const row of rows) createdAt.set(row.id, row.created_at.getTime());
  }
  return createdAt;
}

async function waitFor(arrivals: readonly Arrival[], expected: number) {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  let nextReport = Date.now() + 10_000;
  while (arrivals.length < expected) {
    if (Date.now() > deadline) throw new Error(`only ${arrivals.length} of ${expected} deliveries arrived`);
    if (Date.now() >= nextReport) {
      log(`${arrivals.length}/${expected} delivered`);
      nextReport += 10_000;
    }
    await delay(250);
  }
}

function latencies(arrivals: readonly Arrival[], createdAt: ReadonlyMap<string, number>) {
  const values = arrivals
    .map((a) => a.at - (createdAt.get(a.eventId) ?? Number.NaN))
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  return { p50_ms: percentile(values, 50), p99_ms: percentile(values, 99), max_ms: values.at(-1) ?? null };
}

async function main() {
  const startedAt = new Date();
  const config = loadConfig();
  const db = await createDatabasePool(config.database.url, 10);
  const sealKey = deriveKey(config.secret, 'seal');
  const keys = {
    apiKeyPepper: deriveKey(config.secret, 'api-key-hash'),
    seal: sealKey,
    links: deriveKey(config.secret, 'link-token'),
  };
  const ws = await bootstrapWorkspace(db, keys, {
    workspaceName: 'Bench webhooks',
    ownerEmail: `bench-${randomUUID()}@valise.test`,
  });
  const tenant = { workspaceId: ws.workspace_id, environment: 'live' as const };

  const secrets = new Map<string, string>();
  const receiver = await startReceiver(secrets);
  for (let i = 0; i < WEBHOOKS; i++) {
    const secret = generateWebhookSecret();
    const path = `/hook-${i}`;
    secrets.set(path, secret);
    await createWebhookQueries(db).insert(tenant, {
      name: `bench ${i}`,
      description: null,
      url: `http://127.0.0.1:${receiver.port}${path}`,
      events: ['transfer.created'],
      secretSealed: seal(sealKey, secret),
    });
  }

  const taskQueue = `bench-webhooks-${randomUUID()}`;
  const workers = Array.from({ length: WORKERS }, (_, i) => startWorker(taskQueue, i + 1));
  try {
    // Warm-up: the workers bundle their workflows and open their connections.
    log('warming up');
    const warm = await recordEvents(db, tenant, 20);
    await waitFor(receiver.arrivals, warm.size * WEBHOOKS);
    receiver.arrivals.length = 0;

    log(`steady: ${STEADY_RATE} events/s for ${STEADY_SECONDS} s`);
    // One event per transaction, evenly spaced, as API calls would record them.
    const steadyCreated = new Map<string, number>();
    const steadyStart = Date.now();
    for (let i = 0; i < STEADY_RATE * STEADY_SECONDS; i++) {
      await delay(Math.max(0, steadyStart + (i * 1_000) / STEADY_RATE - Date.now()));
      for (const [id, at] of await recordEvents(db, tenant, 1)) steadyCreated.set(id, at);
    }
    await waitFor(receiver.arrivals, steadyCreated.size * WEBHOOKS);
    const steady = latencies(receiver.arrivals, steadyCreated);
    receiver.arrivals.length = 0;

    log(`burst: ${EVENTS} events × ${WEBHOOKS} webhooks`);
    const burstStart = Date.now();
    const burstCreated = await recordEvents(db, tenant, EVENTS);
    const recorded = Date.now();
    await waitFor(receiver.arrivals, EVENTS * WEBHOOKS);
    const seconds = (Date.now() - burstStart) / 1000;
    const burst = latencies(receiver.arrivals, burstCreated);
    const pairs = new Set(receiver.arrivals.map((a) => `${a.eventId} ${a.path}`));
    const burstDeliveries = receiver.arrivals.length;
    log(`ceiling: ${CEILING_POSTS} bare POSTs, ${CEILING_CONCURRENCY} at a time`);
    const bare = await ceiling(receiver.port, receiver.arrivals);
    // A reference from the design before this one, on the same Temporal right after the burst:
    // workflows shaped like a delivery, doing nothing (bench/temporal-ceiling.ts).
    log('reference: empty delivery-shaped workflows');
    const reference = await measureTemporalCeiling();

    const report = {
      bench: 'webhooks',
      started_at: startedAt.toISOString(),
      commit: gitCommit(),
      node: process.version,
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: availableParallelism(),
      temporal: reference.temporal,
      settings: {
        events: EVENTS,
        webhooks: WEBHOOKS,
        steady_rate: STEADY_RATE,
        steady_seconds: STEADY_SECONDS,
        workers: WORKERS,
      },
      burst: {
        deliveries: burstDeliveries,
        distinct_pairs: pairs.size,
        // A pair that arrived twice: the dispatchers of several workers must never start one delivery twice.
        repeated_deliveries: burstDeliveries - pairs.size,
        seconds: round(seconds, 2),
        deliveries_per_second: round(burstDeliveries / seconds),
        events_recorded_in_seconds: round((recorded - burstStart) / 1000, 2),
        event_to_delivery: burst,
      },
      steady: { deliveries: steadyCreated.size * WEBHOOKS, event_to_delivery: steady },
      ceiling_bare_posts: bare,
      reference_empty_workflows: {
        workflows: reference.workflows,
        seconds: reference.seconds,
        workflows_per_second: reference.workflows_per_second,
      },
      signatures_checked_bad: receiver.badSignatures(),
    };
    const file = writeResults('webhooks', startedAt, report);
    console.log(`${WORKERS} worker(s)`);
    console.log('| run | deliveries | repeated | deliveries/s | event→delivery p50 | p99 |');
    console.log('|---|---:|---:|---:|---:|---:|');
    console.log(
      `| burst: ${EVENTS} events × ${WEBHOOKS} webhooks | ${report.burst.deliveries} | ${report.burst.repeated_deliveries} | ${report.burst.deliveries_per_second} | ${burst.p50_ms} ms | ${burst.p99_ms} ms |`,
    );
    console.log(
      `| steady: ${STEADY_RATE} events/s × ${WEBHOOKS} webhooks | ${report.steady.deliveries} | n/a | n/a | ${steady.p50_ms} ms | ${steady.p99_ms} ms |`,
    );
    console.log(`| ceiling: bare POSTs from the bench | ${bare.posts} | n/a | ${bare.posts_per_second} | n/a | n/a |`);
    console.log(
      `| reference: empty delivery-shaped workflows, Temporal ${reference.temporal.server_version} on ${reference.temporal.persistence} | ${reference.workflows} | n/a | ${reference.workflows_per_second} | n/a | n/a |`,
    );
    log(`results in ${file}`);
    if (pairs.size !== EVENTS * WEBHOOKS || receiver.badSignatures() > 0) {
      log(`ERROR: ${pairs.size} distinct (event, webhook) pairs, ${receiver.badSignatures()} bad signatures`);
      process.exitCode = 1;
    }
  } finally {
    await Promise.all(
      workers.map(async (worker) => {
        worker.kill('SIGTERM');
        await once(worker, 'exit');
      }),
    );
    receiver.close();
    await db.end();
  }
}

await main();
