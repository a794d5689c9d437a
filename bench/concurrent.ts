import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { type IncomingMessage, request } from 'node:http';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { loadConfig } from '../lib/config.ts';
import { deriveKey } from '../lib/crypto/secrets.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { createObjectStore } from '../lib/storage/object-store.ts';
import { bootstrapWorkspace } from '../lib/workspaces/bootstrap.ts';
import { runContext, writeResults } from './results.ts';
import {
  type Api,
  apiClient,
  cpuSeconds,
  drain,
  generated,
  log,
  MiB,
  mbPerSecond,
  mib,
  procStatusKib,
  ROOT,
  RSS_INTERVAL_MS,
  readText,
  round,
  stackPid,
  startChildApi,
  startChildWorker,
  waitUntilActive,
  waitUntilGone,
} from './streaming.ts';

// Many transfers at once (issue #26, "Load and speed"): BENCH_CONCURRENT_CLIENTS (20) uploads of
// BENCH_CONCURRENT_BYTES (256 MiB) each, then as many downloads, all at the same time, against as
// many raw PutObject and GetObject calls straight to MinIO in the same run; the peak memory of
// the API and of the worker meanwhile; with the upload and download slots at their defaults
// (docs/configuration.md: UPLOADS_PER_IP 8, UPLOADS_PER_KEY 16, UPLOADS_MAX 32, DOWNLOADS_PER_IP 8,
// DOWNLOADS_PER_TRANSFER 32, DOWNLOADS_MAX 64). Every client sends from its own loopback address
// (127.0.0.N, http.request's localAddress), as distinct clients would, since the API counts uploads
// and downloads per socket address (api/client-ip.ts: no proxy is trusted here). A last, short row
// sends as many uploads from one address: past UPLOADS_PER_IP they must get 429 with Retry-After.
// Usage: sh scripts/node.sh bench/concurrent.ts    (bench/README.md has the details)
//
// The bench starts its own worker on TEMPORAL_TASK_QUEUE (it scans the files and, at the end,
// deletes the revoked transfers' objects) and its API as a child process, so both pids are known.

const CLIENTS = Number(process.env.BENCH_CONCURRENT_CLIENTS ?? '20');
const SIZE = Number(process.env.BENCH_CONCURRENT_BYTES ?? String(256 * MiB));
/** Each upload of the one-address row: long enough that the first ones are still running when the last arrive. */
const ONE_ADDRESS_SIZE = Number(process.env.BENCH_ONE_ADDRESS_BYTES ?? String(64 * MiB));
const WARMUP_SIZE = 16 * MiB;
/** The settings whose defaults this bench measures with: an override in the environment is dropped. */
const SLOT_SETTINGS = [
  'UPLOADS_PER_IP',
  'UPLOADS_PER_KEY',
  'UPLOADS_MAX',
  'DOWNLOADS_PER_IP',
  'DOWNLOADS_PER_TRANSFER',
  'DOWNLOADS_MAX',
];

/** The loopback address of client `i`; 127.0.0.1 is the one-address row's. */
const clientAddress = (i: number) => `127.0.0.${2 + i}`;

/** A transfer of one file, as the bench uses it. */
type Created = { id: string; code: string; url: string };

type Answer = { status: number; retryAfter: string | null; body: any };

/** An upload or download the API refused (a slot full, 429), as the results keep it. */
const refusalOf = (phase: string, answer: Answer) => ({
  phase,
  status: answer.status,
  retry_after: answer.retryAfter,
  reason: (answer.body?.error?.reason as string | undefined) ?? null,
});

/** One streaming PUT from `localAddress`. A refusal answered before the body is sent is an answer, not an error. */
async function putFrom(url: string, localAddress: string, body: Readable, size: number): Promise<Answer> {
  const req = request(url, {
    method: 'PUT',
    localAddress,
    headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
  });
  // A 429 comes before the body is read and the connection closes under the rest of it.
  req.on('error', () => undefined);
  body.pipe(req);
  const [response] = (await once(req, 'response')) as [IncomingMessage];
  if (response.statusCode !== 200) {
    body.unpipe(req);
    body.destroy();
  }
  const text = await readText(response);
  return {
    status: response.statusCode ?? 0,
    retryAfter: (response.headers['retry-after'] as string | undefined) ?? null,
    body: text ? JSON.parse(text) : null,
  };
}

/** One streaming GET from `localAddress`, drained and hashed. */
async function getFrom(url: string, localAddress: string) {
  const req = request(url, { localAddress });
  req.end();
  const [response] = (await once(req, 'response')) as [IncomingMessage];
  if (response.statusCode !== 200) {
    response.resume();
    const retryAfter = (response.headers['retry-after'] as string | undefined) ?? null;
    return { status: response.statusCode ?? 0, retryAfter, bytes: 0, sha256: '' };
  }
  return { status: 200, retryAfter: null, ...(await drain(response)) };
}

type Peaks = Record<string, { baseline_mib: number; peak_mib: number }>;

/**
 * Runs `phase` while sampling the RSS of each process every 100 ms (VmRSS, /proc), and the CPU
 * seconds each process and this client spent in it.
 */
async function sampledPhase<T>(pids: Record<string, number>, run: () => Promise<T>) {
  const peaks: Peaks = {};
  const cpuBefore: Record<string, number | null> = {};
  for (const [name, pid] of Object.entries(pids)) {
    const rss = procStatusKib(pid, 'VmRSS');
    peaks[name] = { baseline_mib: mib(rss), peak_mib: mib(rss) };
    cpuBefore[name] = cpuSeconds(pid);
  }
  const clientBefore = process.cpuUsage();
  const sample = () => {
    for (const [name, pid] of Object.entries(pids)) {
      const peak = peaks[name];
      if (peak) peak.peak_mib = Math.max(peak.peak_mib, mib(procStatusKib(pid, 'VmRSS')));
    }
  };
  const timer = setInterval(sample, RSS_INTERVAL_MS);
  const started = performance.now();
  try {
    const value = await run();
    const seconds = (performance.now() - started) / 1000;
    sample();
    const cpu: Record<string, number | null> = {};
    for (const [name, pid] of Object.entries(pids)) {
      const after = cpuSeconds(pid);
      const before = cpuBefore[name] ?? null;
      cpu[name] = after === null || before === null ? null : round(after - before);
    }
    const client = process.cpuUsage(clientBefore);
    cpu.client = round((client.user + client.system) / 1e6);
    return { value, seconds, peaks, cpu };
  } finally {
    clearInterval(timer);
  }
}

/** Seconds each client took: the slowest says when the aggregate ended. */
function spread(seconds: number[]) {
  const sorted = [...seconds].sort((a, b) => a - b);
  return {
    min: round(sorted[0] ?? 0),
    median: round(sorted[Math.floor(sorted.length / 2)] ?? 0),
    max: round(sorted.at(-1) ?? 0),
  };
}

async function timedEach<T>(run: () => Promise<T>) {
  const started = performance.now();
  const value = await run();
  return { value, seconds: (performance.now() - started) / 1000 };
}

type Row = {
  measure: string;
  clients: number;
  bytes: number;
  seconds: number;
  mb_per_s: number;
  per_client_seconds: { min: number; median: number; max: number };
  statuses: Record<string, number>;
  peak_rss_mib: Peaks;
  cpu_seconds: Record<string, number | null>;
};

function countStatuses(statuses: number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

async function main() {
  const startedAt = new Date();
  const overridden = SLOT_SETTINGS.filter((name) => process.env[name] !== undefined);
  if (overridden.length > 0) log(`dropping ${overridden.join(', ')} from the environment: the defaults are measured`);
  for (const name of SLOT_SETTINGS) delete process.env[name];
  if (CLIENTS < 1 || CLIENTS > 250) throw new Error('BENCH_CONCURRENT_CLIENTS must be 1 to 250 (one 127.0.0.N each)');
  const config = loadConfig();
  const slots = { uploads: config.transfers.uploads, downloads: config.transfers.downloads };
  const { client: s3, bucket: Bucket } = createObjectStore(config.s3);
  const db = await createDatabasePool(config.database.url, 2);
  const run = randomBytes(6).toString('hex');
  const rawKeys = Array.from({ length: CLIENTS }, (_, i) => `bench/${run}-concurrent-${i}`);
  // Each client's bytes are its own (a 1 MiB block of its own, repeated), so a download that
  // returned another client's file would not match its hash.
  const blocks = Array.from({ length: CLIENTS }, () => randomBytes(MiB));
  // Each client's SHA-256, from its raw PutObject's source (generated() hashes what it produces).
  const expectedSha: string[] = [];
  const transferIds: string[] = [];
  let api: Api | null = null;
  let workspacePrefix: string | null = null;
  const stops: Array<() => Promise<void>> = [];
  let failedScans = () => 0;

  try {
    log(`${CLIENTS} clients × ${SIZE} bytes; slots ${JSON.stringify(slots)}`);
    const workspace = await bootstrapWorkspace(
      db,
      { apiKeyPepper: deriveKey(config.secret, 'api-key-hash'), seal: deriveKey(config.secret, 'seal') },
      { workspaceName: 'Bench concurrent', ownerEmail: `bench-concurrent-${run}@example.com` },
    );
    workspacePrefix = `live/${workspace.workspace_id}/`;
    const workerLog = join(ROOT, 'bench/results/concurrent-worker.log');
    const worker = await startChildWorker(config.temporal.taskQueue, workerLog);
    // Scans that failed and started over (clamd silent past CLAMD_TIMEOUT_MS, say), from the worker's log.
    failedScans = () =>
      readFileSync(workerLog, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"Activity failed"') && line.includes('"activityType":"scanFile"')).length;
    stops.push(worker.stop);
    const child = await startChildApi();
    stops.unshift(child.stop);
    api = apiClient(child.url, workspace.keys.live);
    const minioPid = stackPid('minio');
    const pids: Record<string, number> = {
      api: child.pid,
      worker: worker.pid,
      ...(minioPid ? { minio: minioPid } : {}),
    };
    log(`API pid ${child.pid} on ${child.url}, worker pid ${worker.pid}, task queue ${config.temporal.taskQueue}`);

    const createOne = async (size: number, name: string): Promise<Created> => {
      const created = await (api as Api)('POST', '/v1/transfers', {
        files: [{ name, size }],
        transfer_title: `bench ${name}`,
        expires_in_hours: 1,
      });
      transferIds.push(created.transfer.id);
      return {
        id: created.transfer.id as string,
        code: created.transfer.short_code as string,
        url: created.upload_urls[0].url as string,
      };
    };

    // Warm-up, not measured: one small round trip through the API and the worker.
    log('warm-up…');
    const warm = await createOne(WARMUP_SIZE, 'warmup.bin');
    await putFrom(warm.url, clientAddress(0), generated(WARMUP_SIZE).stream, WARMUP_SIZE);
    await waitUntilActive(api, warm.id);
    const warmLinks = await api('POST', `/v1/shares/${warm.code}/download-links`, {});
    await getFrom(warmLinks.files[0].download_url, clientAddress(0));

    const rows: Row[] = [];
    const total = CLIENTS * SIZE;
    const addRow = (
      measure: string,
      phase: Awaited<ReturnType<typeof sampledPhase<Array<{ seconds: number; status: number }>>>>,
      clients = CLIENTS,
      bytes = total,
    ) => {
      const measured: Row = {
        measure,
        clients,
        bytes,
        seconds: round(phase.seconds),
        mb_per_s: mbPerSecond(bytes, phase.seconds),
        per_client_seconds: spread(phase.value.map((r) => r.seconds)),
        statuses: countStatuses(phase.value.map((r) => r.status)),
        peak_rss_mib: phase.peaks,
        cpu_seconds: phase.cpu,
      };
      log(
        `${measure}: ${measured.mb_per_s} MB/s aggregate (${measured.seconds} s), ${JSON.stringify(measured.statuses)}`,
      );
      rows.push(measured);
    };
    const mismatch = (what: string, i: number, actual: string | undefined) => {
      if (actual !== expectedSha[i])
        throw new Error(`${what} ${i}: SHA-256 ${actual} is not the client's ${expectedSha[i]}`);
    };

    log(`raw: ${CLIENTS} PutObject at once…`);
    const rawPut = await sampledPhase(pids, () =>
      Promise.all(
        rawKeys.map((Key, i) =>
          timedEach(async () => {
            const source = generated(SIZE, blocks[i]);
            await s3.send(new PutObjectCommand({ Bucket, Key, Body: source.stream, ContentLength: SIZE }));
            expectedSha[i] = source.sha256();
          }).then(({ seconds }) => ({ seconds, status: 200 })),
        ),
      ),
    );
    addRow(`raw PutObject to MinIO, ${CLIENTS} at once`, rawPut);

    log(`raw: ${CLIENTS} GetObject at once…`);
    const rawGet = await sampledPhase(pids, () =>
      Promise.all(
        rawKeys.map((Key, i) =>
          timedEach(async () => drain((await s3.send(new GetObjectCommand({ Bucket, Key }))).Body as Readable)).then(
            ({ value, seconds }) => {
              mismatch('raw GET', i, value.sha256);
              return { seconds, status: 200 };
            },
          ),
        ),
      ),
    );
    addRow(`raw GetObject from MinIO, ${CLIENTS} at once`, rawGet);
    for (const Key of rawKeys) await s3.send(new DeleteObjectCommand({ Bucket, Key }));

    // Valise: one transfer per client (so UPLOADS_PER_KEY, per transfer, is one each), each PUT from its own address.
    const transfers: Created[] = [];
    for (let i = 0; i < CLIENTS; i++) transfers.push(await createOne(SIZE, `client-${i}.bin`));
    const refusals: Array<{ phase: string; status: number; retry_after: string | null; reason: string | null }> = [];
    log(`Valise: ${CLIENTS} uploads at once, each from its own address…`);
    const upload = await sampledPhase(pids, () =>
      Promise.all(
        transfers.map((transfer, i) =>
          timedEach(() => putFrom(transfer.url, clientAddress(i), generated(SIZE, blocks[i]).stream, SIZE)).then(
            ({ value, seconds }) => {
              if (value.status === 200) mismatch('Valise upload (hash by the API)', i, value.body?.sha256);
              else refusals.push(refusalOf('upload', value));
              return { seconds, status: value.status };
            },
          ),
        ),
      ),
    );
    addRow(`Valise PUT, ${CLIENTS} at once, one address each`, upload);

    log('waiting for the worker to scan every file…');
    const scans = await sampledPhase(pids, () =>
      Promise.all(
        transfers.map((transfer, i) =>
          timedEach(() => waitUntilActive(api as Api, transfer.id)).then(({ value, seconds }) => {
            mismatch('Valise scan (hash by the worker)', i, value.files[0].sha256);
            return { seconds, status: 200 };
          }),
        ),
      ),
    );
    addRow(`Valise finalise + scan, ${CLIENTS} files (last PUT answered → all active)`, scans);

    const links: string[] = [];
    for (const transfer of transfers) {
      links.push((await api('POST', `/v1/shares/${transfer.code}/download-links`, {})).files[0].download_url as string);
    }
    log(`Valise: ${CLIENTS} downloads at once, each from its own address…`);
    const download = await sampledPhase(pids, () =>
      Promise.all(
        links.map((url, i) =>
          timedEach(() => getFrom(url, clientAddress(i))).then(({ value, seconds }) => {
            if (value.status === 200) mismatch('Valise download', i, value.sha256);
            else
              refusals.push({ phase: 'download', status: value.status, retry_after: value.retryAfter, reason: null });
            return { seconds, status: value.status };
          }),
        ),
      ),
    );
    addRow(`Valise GET, ${CLIENTS} at once, one address each`, download);

    // The same many uploads from one address: UPLOADS_PER_IP of them go on, the rest are refused at once.
    const oneAddress: Created[] = [];
    for (let i = 0; i < CLIENTS; i++) oneAddress.push(await createOne(ONE_ADDRESS_SIZE, `one-address-${i}.bin`));
    log(`Valise: ${CLIENTS} uploads at once of ${ONE_ADDRESS_SIZE} bytes, all from 127.0.0.1…`);
    const oneAddressRefusals: typeof refusals = [];
    const sameAddress = await sampledPhase(pids, () =>
      Promise.all(
        oneAddress.map((transfer) =>
          timedEach(() =>
            putFrom(transfer.url, '127.0.0.1', generated(ONE_ADDRESS_SIZE).stream, ONE_ADDRESS_SIZE),
          ).then(({ value, seconds }) => {
            if (value.status !== 200) oneAddressRefusals.push(refusalOf('one address', value));
            return { seconds, status: value.status };
          }),
        ),
      ),
    );
    const accepted = sameAddress.value.filter((r) => r.status === 200).length;
    addRow(`Valise PUT, ${CLIENTS} at once from one address`, sameAddress, CLIENTS, accepted * ONE_ADDRESS_SIZE);

    const ratios = {
      'Valise upload / raw PutObject': round(upload.seconds ? rawPut.seconds / upload.seconds : 0),
      'Valise download / raw GetObject': round(download.seconds ? rawGet.seconds / download.seconds : 0),
    };
    const refusedWithDistinctAddresses = refusals.length;
    const oneAddressSummary = {
      accepted,
      refused_429: oneAddressRefusals.filter((r) => r.status === 429).length,
      other: oneAddressRefusals.filter((r) => r.status !== 429).length,
      retry_after: [...new Set(oneAddressRefusals.map((r) => r.retry_after))],
      reasons: [...new Set(oneAddressRefusals.map((r) => r.reason))],
    };

    const peak = (r: Row, name: string) => {
      const p = r.peak_rss_mib[name];
      return p ? `${p.baseline_mib} → ${p.peak_mib}` : 'n/a';
    };
    const markdown = [
      `| measure (${CLIENTS} × ${round(SIZE / MiB, 0)} MiB) | s | aggregate MB/s | per client s (min, median, max) | statuses | API RSS MiB | worker RSS MiB | CPU s: API, worker, MinIO, client |`,
      '|---|---:|---:|---|---|---:|---:|---|',
      ...rows.map(
        (r) =>
          `| ${r.measure} | ${r.seconds.toFixed(2)} | ${r.mb_per_s} | ${r.per_client_seconds.min}, ${r.per_client_seconds.median}, ${r.per_client_seconds.max} | ${Object.entries(
            r.statuses,
          )
            .map(([code, n]) => `${code}: ${n}`)
            .join(
              ', ',
            )} | ${peak(r, 'api')} | ${peak(r, 'worker')} | ${r.cpu_seconds.api}, ${r.cpu_seconds.worker}, ${r.cpu_seconds.minio ?? 'n/a'}, ${r.cpu_seconds.client} |`,
      ),
      '',
      '| ratio | value |',
      '|---|---:|',
      ...Object.entries(ratios).map(([name, value]) => `| ${name} | ${value.toFixed(2)} |`),
      '',
      `Failed scan attempts, started over (worker log): ${failedScans()}. Refused with one address per client: ${refusedWithDistinctAddresses}. From one address: ${oneAddressSummary.accepted} accepted, ${oneAddressSummary.refused_429} answered 429 (Retry-After ${oneAddressSummary.retry_after.join(', ') || 'none'}; reason ${oneAddressSummary.reasons.join(', ') || 'none'}), ${oneAddressSummary.other} other.`,
    ].join('\n');
    console.log(markdown);
    const file = writeResults('concurrent', startedAt, {
      ...runContext(startedAt),
      settings: {
        clients: CLIENTS,
        bytes: SIZE,
        one_address_bytes: ONE_ADDRESS_SIZE,
        slots,
        clamd: { timeout_ms: config.clamd.timeoutMs, max_streams: config.clamd.maxStreams },
      },
      pids,
      rows,
      ratios,
      refusals,
      failed_scan_attempts: failedScans(),
      one_address: oneAddressSummary,
      markdown,
    });
    log(`wrote ${file}`);
    if (refusedWithDistinctAddresses > 0) {
      log(`${refusedWithDistinctAddresses} uploads or downloads were refused with one address per client`);
      process.exitCode = 1;
    }
    // UPLOADS_PER_IP of them go on (all, with fewer clients than that), the others are refused with 429.
    const expectedAccepted = Math.min(CLIENTS, slots.uploads.perIp);
    if (accepted !== expectedAccepted || oneAddressSummary.refused_429 !== CLIENTS - accepted) {
      log(`from one address: ${accepted} accepted, expected ${expectedAccepted} (UPLOADS_PER_IP) and 429 for the rest`);
      process.exitCode = 1;
    }
  } finally {
    // Revoked transfers' objects are deleted by their workflows: the worker stops last.
    if (api) for (const id of transferIds) await api('DELETE', `/v1/transfers/${id}`).catch(() => undefined);
    if (workspacePrefix) await waitUntilGone(s3, Bucket, workspacePrefix).catch((error: Error) => log(error.message));
    for (const Key of rawKeys) await s3.send(new DeleteObjectCommand({ Bucket, Key })).catch(() => undefined);
    for (const stop of stops) await stop();
    await db.end();
  }
}

await main();
