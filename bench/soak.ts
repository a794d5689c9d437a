import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { DatabasePool } from 'slonik';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { loadConfig } from '../lib/config.ts';
import { deriveKey } from '../lib/crypto/secrets.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { sql } from '../lib/db/sql.ts';
import { createObjectStore } from '../lib/storage/object-store.ts';
import { connectTemporal } from '../lib/temporal.ts';
import { bootstrapWorkspace } from '../lib/workspaces/bootstrap.ts';
import { intakeDocumentWorkflowId, intakeWorkflowId } from '../workflows/ids.ts';
import { transferWorkflowId } from '../workflows/transferLifecycle.ts';
import { runContext, writeResults } from './results.ts';
import {
  type Api,
  apiClient,
  drain,
  generated,
  getStream,
  log,
  MiB,
  mib,
  procStatusKib,
  putStream,
  ROOT,
  round,
  startChildApi,
  startChildWorker,
} from './streaming.ts';

// A soak at a steady mixed load (issue #26, "Load and speed"): for BENCH_SOAK_MINUTES (60), on a
// fixed schedule that does not wait for answers, transfers are created with a small file, uploaded,
// scanned and downloaded once; intake submissions of a small file are sent; the transfer list is
// read; a rule tags every transfer on `transfer.created`; a webhook subscribed to every event
// delivers to a local receiver, which checks each signature. Transfers expire after
// BENCH_SOAK_EXPIRY_SECONDS and intake documents after BENCH_SOAK_RETENTION_SECONDS. Every minute:
// the API's and the worker's RSS, p50 and p99 of each operation, errors, events recorded and
// webhook deliveries received. Then, once everything has expired: nothing of the soak's workspace
// may be left in MinIO, in PostgreSQL (rows still holding keys, objects, uploads) or in Temporal
// (workflows still running). The verdict compares the first and last minutes of the steady load.
// Usage: sh scripts/node.sh bench/soak.ts    (bench/README.md has the details)

const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? '60');
const TRANSFERS_PER_MINUTE = Number(process.env.BENCH_SOAK_TRANSFERS_PER_MINUTE ?? '60');
const SUBMISSIONS_PER_MINUTE = Number(process.env.BENCH_SOAK_SUBMISSIONS_PER_MINUTE ?? '12');
const LISTS_PER_MINUTE = Number(process.env.BENCH_SOAK_LISTS_PER_MINUTE ?? '60');
const FILE_BYTES = Number(process.env.BENCH_SOAK_FILE_BYTES ?? String(2 * MiB));
const SUBMISSION_BYTES = Number(process.env.BENCH_SOAK_SUBMISSION_BYTES ?? String(MiB));
const EXPIRY_SECONDS = Number(process.env.BENCH_SOAK_EXPIRY_SECONDS ?? '300');
const RETENTION_SECONDS = Number(process.env.BENCH_SOAK_RETENTION_SECONDS ?? '60');
const SAMPLE_MS = 1_000;
/** The Retry-After of the upload and download slots' 429 (docs/transfers.md), and how many a step waits out. */
const RETRY_AFTER_MS = 5_000;
const MAX_REFUSALS = 12;
const POLL_MS = 500;
/** How long after the last operation everything must have expired, been deleted and delivered. */
const SETTLE_TIMEOUT_MS = Number(process.env.BENCH_SOAK_SETTLE_SECONDS ?? '900') * 1000;
/** The verdict's bounds: last window against first. */
const RSS_GROWTH_BOUND = 1.1;
const P99_GROWTH_BOUND = 1.5;

const OPERATIONS = ['create', 'upload', 'scan', 'download_link', 'download', 'submission', 'submission_upload', 'list'];
type Operation = (typeof OPERATIONS)[number];

/** What happened in one minute of the soak. */
type Minute = {
  latencies: Record<Operation, number[]>;
  errors: number;
  /** 429 answers (a slot full), each waited out (Retry-After) and retried, as clients do. */
  refused: number;
  api_rss_kib: number[];
  worker_rss_kib: number[];
  load: number[];
};

function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? null;
}
const mean = (values: readonly number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);
const maxOf = (values: readonly number[]) => values.reduce((a, b) => Math.max(a, b), 0);

/** The least-squares slope of `values` against their index (per minute). */
function slope(values: readonly number[]): number {
  const n = values.length;
  if (n < 2) return 0;
  const xMean = (n - 1) / 2;
  const yMean = mean(values);
  let num = 0;
  let den = 0;
  values.forEach((y, x) => {
    num += (x - xMean) * (y - yMean);
    den += (x - xMean) ** 2;
  });
  return num / den;
}

type Arrival = { eventId: string; at: number; signed: boolean };

/** The webhook's receiver: notes each delivery, checks its signature, answers 204. */
async function startReceiver() {
  const arrivals: Arrival[] = [];
  let verifier: Webhook | null = null;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
      let signed = false;
      try {
        verifier?.verify(Buffer.concat(chunks).toString('utf8'), headers);
        signed = verifier !== null;
      } catch {
        signed = false;
      }
      arrivals.push({ eventId: String(request.headers['webhook-id']), at: Date.now(), signed });
      response.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 10_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/soak`,
    arrivals,
    verifyWith: (secret: string) => {
      verifier = new Webhook(secret);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Polls until `check` returns a value, or fails after `timeoutMs`. */
async function until<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await delay(POLL_MS * 4);
  }
}

const count = z.object({ n: z.coerce.number() });

/** What the soak left in PostgreSQL once everything should have ended: each count must be 0. */
async function databaseLeftovers(db: DatabasePool, workspaceId: string) {
  return {
    // Ended, their objects recorded as deleted.
    transfers_not_ended: await db.oneFirst(sql.type(count)`
      SELECT count(*) AS n FROM transfers WHERE workspace_id = ${workspaceId}
        AND (status NOT IN ('expired', 'deleted') OR objects_deleted_at IS NULL)`),
    // Data keys destroyed, no multipart upload or lease left open.
    transfer_files_holding_keys_or_uploads: await db.oneFirst(sql.type(count)`
      SELECT count(*) AS n FROM transfer_files f JOIN transfers t ON t.id = f.transfer_id
      WHERE t.workspace_id = ${workspaceId}
        AND (f.data_key_wrapped IS NOT NULL OR f.multipart_upload_id IS NOT NULL OR f.upload_lease_id IS NOT NULL)`),
    intake_documents_not_deleted: await db.oneFirst(sql.type(count)`
      SELECT count(*) AS n FROM intake_documents WHERE workspace_id = ${workspaceId}
        AND (status <> 'deleted' OR objects_deleted_at IS NULL OR wrapped_symmetric_key IS NOT NULL)`),
    intake_files_holding_keys_or_uploads: await db.oneFirst(sql.type(count)`
      SELECT count(*) AS n FROM intake_files f JOIN intake_documents d ON d.id = f.document_id
      WHERE d.workspace_id = ${workspaceId}
        AND (f.data_key_wrapped IS NOT NULL OR f.multipart_upload_id IS NOT NULL OR f.upload_lease_id IS NOT NULL)`),
  };
}

async function main() {
  const startedAt = new Date();
  // The webhook's receiver is on loopback, over HTTP: the API (which checks the URL) and the
  // worker (which posts to it) must both allow that; never in production (lib/config.ts refuses it).
  process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = 'true';
  const config = loadConfig();
  const { client: s3, bucket: Bucket } = createObjectStore(config.s3);
  const db = await createDatabasePool(config.database.url, 2);
  const temporal = await connectTemporal(config);
  const run = randomBytes(6).toString('hex');
  const receiver = await startReceiver();
  const stops: Array<() => Promise<void>> = [];
  const block = randomBytes(MiB);
  const fileSha = await drain(generated(FILE_BYTES, block).stream);
  const submissionSha = await drain(generated(SUBMISSION_BYTES, block).stream);

  try {
    const workspace = await bootstrapWorkspace(
      db,
      { apiKeyPepper: deriveKey(config.secret, 'api-key-hash'), seal: deriveKey(config.secret, 'seal') },
      { workspaceName: 'Bench soak', ownerEmail: `bench-soak-${run}@example.com` },
    );
    const workspaceId = workspace.workspace_id;
    const worker = await startChildWorker(config.temporal.taskQueue, join(ROOT, 'bench/results/soak-worker.log'));
    stops.push(worker.stop);
    const child = await startChildApi();
    stops.unshift(child.stop);
    const api: Api = apiClient(child.url, workspace.keys.live);
    log(`API pid ${child.pid} on ${child.url}, worker pid ${worker.pid}, task queue ${config.temporal.taskQueue}`);

    // The workspace's standing configuration: a webhook on every event, a rule, an intake.
    const webhook = await api('POST', '/v1/webhooks', { url: receiver.url, events: ['*'], name: 'soak receiver' });
    receiver.verifyWith(webhook.secret);
    // Events recorded from now on are dispatched after the webhook exists: each must be delivered.
    const webhookCreatedAt = new Date();
    const rule = await api('POST', '/v1/rules', {
      name: 'Tag every transfer',
      trigger_event: 'transfer.created',
      action_type: 'tag_transfer',
      action_config: { tag: 'soak' },
    });
    const intake = await api('POST', '/v1/intakes', {
      title: 'Soak intake',
      encryption_mode: 'server',
      retention_hours: RETENTION_SECONDS / 3600,
      limits: { submissions_per_hour: 1_000_000, submissions_per_day: 1_000_000 },
    });
    const submitter = apiClient(child.url, intake.publishable_key.key);

    const minutes: Minute[] = Array.from({ length: MINUTES }, () => ({
      latencies: Object.fromEntries(OPERATIONS.map((op) => [op, []])) as unknown as Record<Operation, number[]>,
      errors: 0,
      refused: 0,
      api_rss_kib: [],
      worker_rss_kib: [],
      load: [],
    }));
    const errorSamples: string[] = [];
    const refusalSamples: string[] = [];
    const transferIds: string[] = [];
    const documentIds: string[] = [];
    const soakStart = performance.now();
    const soakEnd = soakStart + MINUTES * 60_000;
    const minuteNow = () => Math.min(MINUTES - 1, Math.floor((performance.now() - soakStart) / 60_000));

    /**
     * Times `step`, in the minute it started. A 429 is waited out (Retry-After) and the step tried
     * again, as the SDK does, its wait included in the latency; any other failure counts as an
     * error of that minute and ends the cycle.
     */
    const measure = async <T>(op: Operation, step: () => Promise<T>): Promise<T> => {
      const minute = minutes[minuteNow()] as Minute;
      const started = performance.now();
      for (let refusals = 0; ; refusals++) {
        try {
          const value = await step();
          minute.latencies[op]?.push(performance.now() - started);
          return value;
        } catch (error) {
          const message = (error as Error).message;
          if (/answered 429/.test(message) && refusals < MAX_REFUSALS) {
            minute.refused++;
            if (refusalSamples.length < 20) refusalSamples.push(`${op}: ${message}`);
            await delay(RETRY_AFTER_MS);
            continue;
          }
          minute.errors++;
          if (errorSamples.length < 50) errorSamples.push(`${op}: ${message}`);
          throw error;
        }
      }
    };

    // Each cycle is a client of its own, on an address of its own (127.0.0.2 to .254, in turn): the
    // API counts uploads and downloads at once per address (UPLOADS_PER_IP, DOWNLOADS_PER_IP: 8),
    // which one address sending every upload of a loaded minute would pass.
    let clients = 0;
    const nextAddress = () => `127.0.0.${2 + (clients++ % 253)}`;

    const transferCycle = async () => {
      const address = nextAddress();
      const created = await measure('create', () =>
        api('POST', '/v1/transfers', {
          files: [{ name: 'soak.bin', size: FILE_BYTES }],
          transfer_title: 'soak',
          expires_in_hours: EXPIRY_SECONDS / 3600,
        }),
      );
      transferIds.push(created.transfer.id);
      await measure('upload', async () => {
        const url = created.upload_urls[0].url;
        const uploaded = await putStream(url, generated(FILE_BYTES, block).stream, FILE_BYTES, address);
        if (uploaded.sha256 !== fileSha.sha256) throw new Error(`upload of ${created.transfer.id}: wrong SHA-256`);
      });
      await measure('scan', async () => {
        for (;;) {
          const transfer = await api('GET', `/v1/transfers/${created.transfer.id}`);
          if (transfer.status === 'active') return;
          if (transfer.status !== 'scanning') throw new Error(`transfer ended ${transfer.status_reason}`);
          await delay(POLL_MS);
        }
      });
      const links = await measure('download_link', () =>
        api('POST', `/v1/shares/${created.transfer.short_code}/download-links`, {}),
      );
      await measure('download', async () => {
        const downloaded = await drain(await getStream(links.files[0].download_url, address));
        if (downloaded.sha256 !== fileSha.sha256) throw new Error(`download of ${created.transfer.id}: wrong SHA-256`);
      });
    };

    const submissionCycle = async () => {
      const address = nextAddress();
      const submission = await measure('submission', () =>
        submitter('POST', `/v1/intakes/${intake.id}/submissions`, {
          files: [{ name: 'soak.bin', size: SUBMISSION_BYTES }],
        }),
      );
      documentIds.push(submission.document.id);
      await measure('submission_upload', async () => {
        const url = submission.upload_urls[0].url;
        const uploaded = await putStream(url, generated(SUBMISSION_BYTES, block).stream, SUBMISSION_BYTES, address);
        if (uploaded.sha256 !== submissionSha.sha256) {
          throw new Error(`submission ${submission.document.id}: wrong SHA-256`);
        }
      });
    };

    const listCycle = () => measure('list', () => api('GET', '/v1/transfers?limit=20'));

    // Each operation on its own clock, started on time whether the last one has answered or not.
    const inFlight = new Set<Promise<unknown>>();
    const schedule = async (perMinute: number, cycle: () => Promise<unknown>) => {
      if (perMinute <= 0) return;
      const interval = 60_000 / perMinute;
      for (let next = soakStart; next < soakEnd; next += interval) {
        const wait = next - performance.now();
        if (wait > 0) await delay(wait);
        const started = cycle().catch(() => undefined);
        inFlight.add(started);
        void started.finally(() => inFlight.delete(started));
      }
    };
    // A process that is gone (the worker exits when Temporal goes away) is an error of its minute, said once.
    const gone = new Set<string>();
    const rssOrGone = (name: string, pid: number, minute: Minute) => {
      try {
        return [procStatusKib(pid, 'VmRSS')];
      } catch {
        minute.errors++;
        if (!gone.has(name)) log(`the ${name} (pid ${pid}) has exited`);
        gone.add(name);
        return [];
      }
    };
    const sampler = setInterval(() => {
      const minute = minutes[minuteNow()] as Minute;
      minute.api_rss_kib.push(...rssOrGone('API', child.pid, minute));
      minute.worker_rss_kib.push(...rssOrGone('worker', worker.pid, minute));
      minute.load.push(loadavg()[0] ?? 0);
    }, SAMPLE_MS);
    let reported = 0;
    const reporter = setInterval(() => {
      const done = minuteNow();
      if (done <= reported) return;
      const m = minutes[reported] as Minute;
      log(
        `minute ${reported + 1}/${MINUTES}: API ${mib(maxOf(m.api_rss_kib))} MiB, worker ${mib(maxOf(m.worker_rss_kib))} MiB, ` +
          `${m.latencies.create?.length ?? 0} transfers, upload p99 ${round(percentile(m.latencies.upload ?? [], 99) ?? 0, 0)} ms, ` +
          `errors ${m.errors}, 429 retried ${m.refused}, deliveries so far ${receiver.arrivals.length}`,
      );
      reported = done;
    }, 5_000);

    log(
      `soak: ${MINUTES} min; per minute ${TRANSFERS_PER_MINUTE} transfers of ${FILE_BYTES} bytes (expiring after ${EXPIRY_SECONDS} s), ` +
        `${SUBMISSIONS_PER_MINUTE} submissions of ${SUBMISSION_BYTES} bytes (kept ${RETENTION_SECONDS} s), ${LISTS_PER_MINUTE} lists`,
    );
    await Promise.all([
      schedule(TRANSFERS_PER_MINUTE, transferCycle),
      schedule(SUBMISSIONS_PER_MINUTE, submissionCycle),
      schedule(LISTS_PER_MINUTE, listCycle),
    ]);
    await Promise.all([...inFlight]);
    clearInterval(sampler);
    clearInterval(reporter);
    const loadEnd = performance.now();
    log(`load over (${round((loadEnd - soakStart) / 60_000, 1)} min); waiting for every transfer and document to end…`);

    // Everything expires on its own: transfers at their expiry, documents at the end of their retention.
    const settleStart = performance.now();
    await until('every transfer and document ended', SETTLE_TIMEOUT_MS, async () => {
      const left = await databaseLeftovers(db, workspaceId);
      return left.transfers_not_ended === 0 && left.intake_documents_not_deleted === 0 ? true : undefined;
    }).catch((error: Error) => log(error.message));
    const settledSeconds = round((performance.now() - settleStart) / 1000, 1);
    // The intake itself has no expiry: deleting it ends its workflow (it holds no document any more).
    await api('DELETE', `/v1/intakes/${intake.id}`);

    // Every event recorded since the webhook exists is delivered, once the dispatcher and sender catch up.
    const eventRow = z.object({ id: z.string(), type: z.string(), created_at: z.number() });
    const eventsOf = () =>
      db.any(sql.type(eventRow)`
        SELECT id, type, (extract(epoch FROM created_at) * 1000)::float8 AS created_at FROM events
        WHERE workspace_id = ${workspaceId} AND environment = 'live' AND created_at >= ${webhookCreatedAt.toISOString()}`);
    const missingDeliveries = async () => {
      const delivered = new Set(receiver.arrivals.map((a) => a.eventId));
      return (await eventsOf()).filter((event) => !delivered.has(event.id));
    };
    await until('every event delivered', 5 * 60_000, async () =>
      (await missingDeliveries()).length === 0 ? true : undefined,
    ).catch((error: Error) => log(error.message));
    const events = await eventsOf();
    const missing = await missingDeliveries();

    // What is left: objects, rows, running workflows.
    const objectsLeft = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: `live/${workspaceId}/` }));
    const database = await databaseLeftovers(db, workspaceId);
    const workflowIds = [
      ...transferIds.map(transferWorkflowId),
      ...documentIds.map(intakeDocumentWorkflowId),
      intakeWorkflowId(intake.id),
    ];
    const runningWorkflows = async (ids: readonly string[]) => {
      const running: string[] = [];
      for (const id of ids) {
        const status = await temporal.workflow
          .getHandle(id)
          .describe()
          .then(
            (description) => description.status.name,
            () => 'NOT_FOUND',
          );
        if (status === 'RUNNING') running.push(id);
      }
      return running;
    };
    // The intake's workflow ends a moment after its deletion: the others were over long before.
    let running = await runningWorkflows(workflowIds);
    for (let tries = 0; running.length > 0 && tries < 30; tries++) {
      await delay(2_000);
      running = await runningWorkflows(running);
    }
    const executions = await db.any(sql.type(z.object({ status: z.string(), n: z.coerce.number() }))`
      SELECT status, count(*) AS n FROM rule_executions WHERE rule_id = ${rule.id} GROUP BY status`);
    const tagged = await db.oneFirst(sql.type(count)`
      SELECT count(*) AS n FROM transfers WHERE workspace_id = ${workspaceId} AND 'soak' = ANY (tags)`);

    // The per-minute table, with each delivery's lag from its event's recording.
    const eventAt = new Map(events.map((event) => [event.id, event.created_at]));
    const wallStart = Date.now() - (performance.now() - soakStart);
    const minuteOfWall = (at: number) => Math.floor((at - wallStart) / 60_000);
    const eventsPerMinute = new Map<number, number>();
    for (const event of events) {
      const m = minuteOfWall(event.created_at);
      eventsPerMinute.set(m, (eventsPerMinute.get(m) ?? 0) + 1);
    }
    const deliveriesPerMinute = new Map<number, number[]>();
    for (const arrival of receiver.arrivals) {
      const created = eventAt.get(arrival.eventId);
      if (created === undefined) continue;
      const m = minuteOfWall(arrival.at);
      deliveriesPerMinute.set(m, [...(deliveriesPerMinute.get(m) ?? []), arrival.at - created]);
    }
    const badSignatures = receiver.arrivals.filter((a) => !a.signed).length;

    const cell = (values: readonly number[]) =>
      values.length ? `${round(percentile(values, 50) ?? 0, 0)} / ${round(percentile(values, 99) ?? 0, 0)}` : '–';
    const perMinute = minutes.map((m, i) => ({
      minute: i + 1,
      load: round(mean(m.load), 1),
      api_rss_mib: mib(maxOf(m.api_rss_kib)),
      worker_rss_mib: mib(maxOf(m.worker_rss_kib)),
      operations: Object.fromEntries(
        OPERATIONS.map((op) => {
          const values = m.latencies[op] ?? [];
          return [op, { count: values.length, p50_ms: percentile(values, 50), p99_ms: percentile(values, 99) }];
        }),
      ),
      refused: m.refused,
      errors: m.errors,
      events: eventsPerMinute.get(i) ?? 0,
      deliveries: deliveriesPerMinute.get(i)?.length ?? 0,
      delivery_lag_p99_ms: percentile(deliveriesPerMinute.get(i) ?? [], 99),
    }));
    const tableOps: Operation[] = ['create', 'upload', 'scan', 'download', 'submission', 'submission_upload', 'list'];
    const markdown = [
      `| min | load | API RSS MiB | worker RSS MiB | transfers | ${tableOps.map((op) => `${op} p50 / p99 ms`).join(' | ')} | 429 retried | errors | events | deliveries | delivery lag p99 ms |`,
      `|---:|---:|---:|---:|---:|${tableOps.map(() => '---:').join('|')}|---:|---:|---:|---:|---:|`,
      ...perMinute.map(
        (r, i) =>
          `| ${r.minute} | ${r.load} | ${r.api_rss_mib} | ${r.worker_rss_mib} | ${r.operations.create?.count ?? 0} | ${tableOps
            .map((op) => cell(minutes[i]?.latencies[op] ?? []))
            .join(
              ' | ',
            )} | ${r.refused} | ${r.errors} | ${r.events} | ${r.deliveries} | ${r.delivery_lag_p99_ms === null ? '–' : round(r.delivery_lag_p99_ms, 0)} |`,
      ),
    ];

    // The verdict: the first window of minutes against the last (10 each in an hour, a third of a
    // shorter run), once the load is at its steady size. Until the first transfers expire, every
    // minute adds live transfers, and their workflows to the worker's cache: memory grows by design.
    const steadyFrom = Math.min(MINUTES - 1, Math.ceil(Math.max(EXPIRY_SECONDS, RETENTION_SECONDS) / 60));
    const steady = minutes.slice(steadyFrom);
    const window = Math.max(1, Math.min(10, Math.floor(steady.length / 3)));
    const first = steady.slice(0, window);
    const last = steady.slice(-window);
    const windows = `minutes ${steadyFrom + 1}–${steadyFrom + window} against ${MINUTES - window + 1}–${MINUTES}`;
    const rssOf = (ms: Minute[], key: 'api_rss_kib' | 'worker_rss_kib') => mib(mean(ms.map((m) => maxOf(m[key]))));
    const p99Of = (ms: Minute[]) =>
      Object.fromEntries(
        OPERATIONS.map((op) => [
          op,
          round(
            percentile(
              ms.flatMap((m) => m.latencies[op] ?? []),
              99,
            ) ?? 0,
            0,
          ),
        ]),
      );
    const firstP99 = p99Of(first);
    const lastP99 = p99Of(last);
    const growth = (a: number, b: number) => (a > 0 ? round(b / a) : null);
    const totalErrors = minutes.reduce((sum, m) => sum + m.errors, 0);
    const totalRefused = minutes.reduce((sum, m) => sum + m.refused, 0);
    const leftovers =
      (objectsLeft.KeyCount ?? 0) + Object.values(database).reduce((sum, n) => sum + n, 0) + running.length;
    const verdict = {
      window_minutes: window,
      api_rss_mib: { first: rssOf(first, 'api_rss_kib'), last: rssOf(last, 'api_rss_kib') },
      worker_rss_mib: { first: rssOf(first, 'worker_rss_kib'), last: rssOf(last, 'worker_rss_kib') },
      steady_from_minute: steadyFrom + 1,
      api_rss_slope_mib_per_hour: round(mib(slope(steady.map((m) => maxOf(m.api_rss_kib)))) * 60, 1),
      worker_rss_slope_mib_per_hour: round(mib(slope(steady.map((m) => maxOf(m.worker_rss_kib)))) * 60, 1),
      p99_ms: { first: firstP99, last: lastP99 },
      errors: totalErrors,
      refused_429_retried: totalRefused,
      events: events.length,
      deliveries_missing: missing.length,
      bad_signatures: badSignatures,
      leftovers: {
        minio_objects: objectsLeft.KeyCount ?? 0,
        ...database,
        workflows_running: running.length,
      },
      rule: { executions: Object.fromEntries(executions.map((e) => [e.status, e.n])), transfers_tagged: tagged },
      transfers: transferIds.length,
      documents: documentIds.length,
      settled_seconds: settledSeconds,
    };
    const checks = {
      'API RSS flat': (growth(verdict.api_rss_mib.first, verdict.api_rss_mib.last) ?? 0) <= RSS_GROWTH_BOUND,
      'worker RSS flat': (growth(verdict.worker_rss_mib.first, verdict.worker_rss_mib.last) ?? 0) <= RSS_GROWTH_BOUND,
      'p99 flat': OPERATIONS.every((op) => (growth(firstP99[op] ?? 0, lastP99[op] ?? 0) ?? 0) <= P99_GROWTH_BOUND),
      'no error': totalErrors === 0,
      'every event delivered, signed': missing.length === 0 && badSignatures === 0,
      'every transfer tagged by the rule': tagged === transferIds.length,
      'nothing left behind': leftovers === 0,
    };
    markdown.push(
      '',
      `| verdict (${windows}, once the first transfers expired) | first | last | holds |`,
      '|---|---:|---:|---|',
      `| API RSS, MiB (mean of each minute's peak; slope ${verdict.api_rss_slope_mib_per_hour} MiB/h) | ${verdict.api_rss_mib.first} | ${verdict.api_rss_mib.last} | ${checks['API RSS flat'] ? 'yes' : 'NO'} (bound ×${RSS_GROWTH_BOUND}) |`,
      `| worker RSS, MiB (slope ${verdict.worker_rss_slope_mib_per_hour} MiB/h) | ${verdict.worker_rss_mib.first} | ${verdict.worker_rss_mib.last} | ${checks['worker RSS flat'] ? 'yes' : 'NO'} (bound ×${RSS_GROWTH_BOUND}) |`,
      ...OPERATIONS.map(
        (op) =>
          `| ${op} p99, ms | ${firstP99[op]} | ${lastP99[op]} | ${(growth(firstP99[op] ?? 0, lastP99[op] ?? 0) ?? 0) <= P99_GROWTH_BOUND ? 'yes' : 'NO'} (bound ×${P99_GROWTH_BOUND}) |`,
      ),
      `| errors (429 answers waited out and retried, not errors: ${totalRefused}) | | ${totalErrors} | ${checks['no error'] ? 'yes' : 'NO'} |`,
      `| events since the webhook / not delivered / bad signatures | | ${events.length} / ${missing.length} / ${badSignatures} | ${checks['every event delivered, signed'] ? 'yes' : 'NO'} |`,
      `| transfers / tagged by the rule (executions ${JSON.stringify(verdict.rule.executions)}) | | ${transferIds.length} / ${tagged} | ${checks['every transfer tagged by the rule'] ? 'yes' : 'NO'} |`,
      `| left behind: MinIO objects, ${Object.keys(database).join(', ')}, workflows running | | ${verdict.leftovers.minio_objects}, ${Object.values(database).join(', ')}, ${running.length} | ${checks['nothing left behind'] ? 'yes' : 'NO'} |`,
    );
    console.log(markdown.join('\n'));
    const file = writeResults('soak', startedAt, {
      ...runContext(startedAt),
      settings: {
        minutes: MINUTES,
        transfers_per_minute: TRANSFERS_PER_MINUTE,
        submissions_per_minute: SUBMISSIONS_PER_MINUTE,
        lists_per_minute: LISTS_PER_MINUTE,
        file_bytes: FILE_BYTES,
        submission_bytes: SUBMISSION_BYTES,
        expiry_seconds: EXPIRY_SECONDS,
        retention_seconds: RETENTION_SECONDS,
      },
      workspace_id: workspaceId,
      pids: { api: child.pid, worker: worker.pid },
      per_minute: perMinute,
      verdict,
      checks,
      error_samples: errorSamples,
      refusal_samples: refusalSamples,
      missing_deliveries: missing.slice(0, 50),
      workflows_running: running.slice(0, 50),
      objects_left: (objectsLeft.Contents ?? []).slice(0, 50).map((object) => object.Key),
      markdown: markdown.join('\n'),
    });
    log(`wrote ${file}`);
    const failed = Object.entries(checks).filter(([, holds]) => !holds);
    if (failed.length > 0) {
      log(`the soak does not hold: ${failed.map(([name]) => name).join(', ')}`);
      if (errorSamples.length > 0) log(`first errors: ${errorSamples.slice(0, 5).join(' | ')}`);
      process.exitCode = 1;
    }
  } finally {
    for (const stop of stops) await stop();
    await receiver.close();
    await temporal.connection.close();
    await db.end();
  }
}

await main();
