import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { type IncomingMessage, request } from 'node:http';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { freePort } from '../test/helpers/ports.ts';

// What the streaming benchmarks share (bench/transfers.ts, bench/zip.ts): bytes generated and
// hashed on the fly, streaming HTTP, the API as a child process whose RSS is sampled from /proc,
// and the AES-256-GCM ceiling from `openssl speed`.

export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;
export const RSS_INTERVAL_MS = 100;
const POLL_MS = 200;
const SCAN_TIMEOUT_MS = 30 * 60_000;
const CLEANUP_TIMEOUT_MS = 15 * 60_000;
/** Rate limits no bench reaches, so no measured request is refused with 429. */
export const UNLIMITED_RATES = {
  RATE_LIMIT_READ: '1000000000',
  RATE_LIMIT_WRITE: '1000000000',
  RATE_LIMIT_EXPENSIVE: '1000000000',
  RATE_LIMIT_PUBLIC: '1000000000',
};

/**
 * What an API process a bench measures runs with: no rate limit, and a CPU profile under
 * `profileDir` (BENCH_CPU_PROF_DIR by default; null for none).
 */
export function benchedApiEnv(profileDir = process.env.BENCH_CPU_PROF_DIR ?? null): Record<string, string> {
  // The profile covers the whole run and is written when the process stops (bench/README.md).
  return { ...UNLIMITED_RATES, ...(profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}) };
}

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BLOCK = randomBytes(MiB);

export const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
export const mbPerSecond = (bytes: number, seconds: number) => round(bytes / 1e6 / seconds, 1);
export const mib = (kib: number) => round(kib / 1024, 1);
// --- data: generated on the fly, hashed on both ends --------------------------------------------------------------

/** `size` bytes of one random 1 MiB block repeated, hashed as they are read. */
export function generated(size: number, block: Buffer = BLOCK) {
  const hash = createHash('sha256');
  let produced = 0;
  const stream = new Readable({
    read() {
      if (produced === size) {
        this.push(null);
        return;
      }
      const chunk = block.subarray(0, Math.min(block.length, size - produced));
      produced += chunk.length;
      hash.update(chunk);
      this.push(chunk);
    },
  });
  return { stream, sha256: () => hash.digest('hex') };
}

/** Reads a stream to its end; its length and SHA-256. */
export async function drain(stream: AsyncIterable<Buffer>) {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

export async function timed<T>(run: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const start = performance.now();
  const value = await run();
  return { value, seconds: (performance.now() - start) / 1000 };
}

// --- HTTP ---------------------------------------------------------------------------------------------------------

export async function readText(response: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of response) text += chunk;
  return text;
}

/**
 * One streaming PUT with Content-Length; the JSON answer, which must be a 200. `localAddress`: the
 * loopback address to send from (127.0.0.N), for benches whose clients stand for distinct ones.
 */
export async function putStream(url: string, body: Readable, size: number, localAddress?: string) {
  const req = request(url, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
    ...(localAddress ? { localAddress } : {}),
  });
  const [[response]] = await Promise.all([once(req, 'response') as Promise<[IncomingMessage]>, pipeline(body, req)]);
  const text = await readText(response);
  if (response.statusCode !== 200) throw new Error(`PUT answered ${response.statusCode}: ${text}`);
  return JSON.parse(text);
}

/** A GET whose body is streamed, from `localAddress` if given; fails on anything but 200. */
export async function getStream(url: string, localAddress?: string): Promise<IncomingMessage> {
  const req = request(url, localAddress ? { localAddress } : {});
  req.end();
  const [response] = (await once(req, 'response')) as [IncomingMessage];
  if (response.statusCode !== 200) throw new Error(`GET answered ${response.statusCode}: ${await readText(response)}`);
  return response;
}

/**
 * One curl transfer (`args` say what): curl's own timing (`time_total`), the status and the bytes
 * each way. curl is the client both of Valise and of raw MinIO in the rows that compare them, so
 * neither side pays for a Node client the other does not.
 */
export async function curl(args: string[]) {
  const format = '%{http_code} %{time_total} %{size_upload} %{size_download}';
  const { stdout } = await promisify(execFile)('curl', ['-sS', '-o', '/dev/null', '-w', format, ...args], {
    maxBuffer: 1024 * 1024,
  });
  const [status, seconds, uploaded, downloaded] = stdout.trim().split(' ');
  return {
    status: Number(status),
    seconds: Number(seconds),
    uploaded: Number(uploaded),
    downloaded: Number(downloaded),
  };
}

/** curl's arguments to sign a request to the object store (S3 SigV4) with the app's credentials. */
export function curlS3Auth(s3: { region: string; accessKeyId: string; secretAccessKey: string }) {
  return ['--aws-sigv4', `aws:amz:${s3.region}:s3`, '--user', `${s3.accessKeyId}:${s3.secretAccessKey}`];
}

export function apiClient(url: string, key: string) {
  return async (method: string, path: string, body?: unknown): Promise<any> => {
    const response = await fetch(url + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return text ? JSON.parse(text) : null;
  };
}
export type Api = ReturnType<typeof apiClient>;

// --- the API as a child process, and its memory -------------------------------------------------------------------

export async function startChildApi(options: { cpuProfDir?: string | null; root?: string } = {}) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // BENCH_API_NODE_FLAGS: more node or V8 flags for the measured API, after ops/node-flags (a later flag wins).
  const flags = (process.env.BENCH_API_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
  const child = spawn('sh', ['scripts/node.sh', ...flags, 'api/main.ts'], {
    // Another checkout's code (a base commit to compare with) when `root` names one.
    cwd: options.root ?? ROOT,
    env: {
      ...process.env,
      API_HOST: '127.0.0.1',
      API_PORT: String(port),
      PUBLIC_BASE_URL: url,
      ...benchedApiEnv(options.cpuProfDir),
    },
    // The API's output goes to stderr with the bench's progress; stdout is the tables.
    stdio: ['ignore', 2, 2],
  });
  const exited = once(child, 'exit');
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the API exited (${child.exitCode})`);
    const up = await fetch(`${url}/v1/welcome`).then(
      (response) => response.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error('the API did not answer within 60 s');
    await delay(250);
  }
  const pid = child.pid;
  // `sh` execs node: the child's pid must now be node running api/main.ts, not a shell around it.
  const exe = pid === undefined ? '' : basename(readlinkSync(`/proc/${pid}/exe`));
  const cmdline = pid === undefined ? '' : readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  if (pid === undefined || exe !== 'node' || !cmdline.includes('api/main.ts')) {
    child.kill('SIGKILL');
    throw new Error(`pid ${pid} is not the API's node process (${exe}: ${cmdline})`);
  }
  return { url, pid, cmdline: cmdline.trim(), stop: () => stopChild(child, exited) };
}

export async function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timeout = delay(15_000).then(() => 'timeout');
  if ((await Promise.race([exited, timeout])) === 'timeout') {
    child.kill('SIGKILL');
    await exited;
  }
}

/** A `kB` field of /proc/<pid>/status (VmRSS, VmHWM), in KiB. */
export function procStatusKib(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match?.[1]) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]);
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; null once it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    return statCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** CPU seconds by kind of thread (threadCpuSeconds). */
export type ThreadCpu = { main: number; v8_helpers: number; other: number };

/**
 * CPU seconds a process's threads have used so far, by kind: node's main thread (`main`), V8's
 * helper threads (`v8_helpers`: concurrent marking and sweeping of the garbage collector, and
 * background compilation) and the rest (`other`: libuv's pool, the inspector…). What showed that
 * V8's helpers, not the upload's own work, took most of the API's CPU (docs/architecture.md,
 * "Memory and the garbage collector").
 */
export function threadCpuSeconds(pid: number): ThreadCpu | null {
  try {
    const split: ThreadCpu = { main: 0, v8_helpers: 0, other: 0 };
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const kind = task === String(pid) ? 'main' : name.startsWith('V8Worker') ? 'v8_helpers' : 'other';
      split[kind] += statCpuSeconds(stat);
    }
    return split;
  } catch {
    return null;
  }
}

/** utime + stime of a process's or a thread's `stat` line, in seconds. */
function statCpuSeconds(stat: string): number {
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** The kernel's clock ticks per second (USER_HZ), 100 on Linux's usual builds. */
const CLOCK_TICKS = 100;

/** The object store's pid when the project's stack runs it (scripts/stack.sh), for its CPU time. */
export function stackPid(component: string): number | null {
  const profile = process.env.VALISE_STACK_PROFILE ?? 'dev';
  const dir = process.env.VALISE_DATA_DIR ?? join(ROOT, '.data');
  try {
    const pid = Number(readFileSync(join(dir, profile, 'pids', `${component}.pid`), 'utf8').split(' ')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

export type RssReport = {
  phase: string;
  /** CPU seconds the API, the object store and the bench (the client) spent in the phase. */
  cpu_seconds: {
    api: number | null;
    /** The API's CPU by thread (threadCpuSeconds). */
    api_threads: ThreadCpu | null;
    minio: number | null;
    client: number;
  };
  baseline_kib: number;
  peak_kib: number;
  growth_kib: number;
  /** The kernel's own peak (VmHWM) over the phase, which also catches what happens between samples. */
  kernel_peak_kib: number | null;
  samples: number;
};

/**
 * Times `run` while sampling the RSS of `pid` every 100 ms. The baseline is
 * read just before it starts; the kernel's high-water mark is reset then too
 * (writing 5 to clear_refs), so VmHWM afterwards is the peak of this phase.
 */
export async function sampled<T>(pid: number, phase: string, run: () => Promise<T>) {
  const baseline = procStatusKib(pid, 'VmRSS');
  const minioPid = stackPid('minio');
  const cpuBefore = {
    api: cpuSeconds(pid),
    apiThreads: threadCpuSeconds(pid),
    minio: minioPid ? cpuSeconds(minioPid) : null,
    client: process.cpuUsage(),
  };
  let hwmReset = true;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    hwmReset = false;
  }
  let peak = baseline;
  let samples = 0;
  const sample = () => {
    peak = Math.max(peak, procStatusKib(pid, 'VmRSS'));
    samples++;
  };
  const timer = setInterval(sample, RSS_INTERVAL_MS);
  try {
    const { value, seconds } = await timed(run);
    sample();
    const spent = (before: number | null, after: number | null) =>
      before === null || after === null ? null : round(after - before, 2);
    const client = process.cpuUsage(cpuBefore.client);
    const rss: RssReport = {
      phase,
      cpu_seconds: {
        api: spent(cpuBefore.api, cpuSeconds(pid)),
        api_threads: threadsSpent(cpuBefore.apiThreads, threadCpuSeconds(pid)),
        minio: minioPid ? spent(cpuBefore.minio, cpuSeconds(minioPid)) : null,
        client: round((client.user + client.system) / 1e6, 2),
      },
      baseline_kib: baseline,
      peak_kib: peak,
      growth_kib: peak - baseline,
      kernel_peak_kib: hwmReset ? procStatusKib(pid, 'VmHWM') : null,
      samples,
    };
    return { value, seconds, rss };
  } finally {
    clearInterval(timer);
  }
}

function threadsSpent(before: ThreadCpu | null, after: ThreadCpu | null): ThreadCpu | null {
  if (!before || !after) return null;
  return {
    main: round(after.main - before.main, 2),
    v8_helpers: round(after.v8_helpers - before.v8_helpers, 2),
    other: round(after.other - before.other, 2),
  };
}

// --- the measurements ---------------------------------------------------------------------------------------------

export async function opensslSpeed() {
  const args = ['speed', '-evp', 'aes-256-gcm', '-seconds', '3'];
  const { stdout } = await promisify(execFile)('openssl', args);
  // "type  16 bytes  64 bytes … 16384 bytes" then "AES-256-GCM  40079.27k … 4226727.94k" (1000s of bytes/s).
  const lines = stdout.split('\n');
  const header = lines.find((line) => line.startsWith('type'));
  const values = lines.find((line) => /^aes-256-gcm\s/i.test(line));
  if (!header || !values) throw new Error(`cannot parse openssl speed:\n${stdout}`);
  const sizes = [...header.matchAll(/(\d+) bytes/g)].map((m) => Number(m[1]));
  const rates = [...values.matchAll(/([\d.]+)k/g)].map((m) => Number(m[1]));
  const column = sizes.includes(16384) ? sizes.indexOf(16384) : sizes.length - 1;
  const rate = rates[column];
  const blockBytes = sizes[column];
  if (rate === undefined || blockBytes === undefined) throw new Error(`cannot parse openssl speed:\n${stdout}`);
  return { command: `openssl ${args.join(' ')}`, block_bytes: blockBytes, mb_per_s: round(rate / 1000, 1) };
}

export type Row = { measure: string; bytes: number; seconds: number; mb_per_s: number };

/** One measured row, also logged as it is taken: a run that fails later (clamd timing out on a busy machine) keeps its figures. */
export const row = (measure: string, bytes: number, seconds: number): Row => {
  const measured = { measure, bytes, seconds: round(seconds), mb_per_s: mbPerSecond(bytes, seconds) };
  log(`${measure}: ${measured.mb_per_s} MB/s (${measured.seconds} s)`);
  return measured;
};

export async function waitUntilActive(api: Api, id: string) {
  const deadline = Date.now() + SCAN_TIMEOUT_MS;
  for (;;) {
    const transfer = await api('GET', `/v1/transfers/${id}`);
    if (transfer.status === 'active') return transfer;
    if (transfer.status !== 'scanning') throw new Error(`transfer ${id} ended: ${transfer.status_reason}`);
    if (Date.now() > deadline) throw new Error(`transfer ${id} not active after ${SCAN_TIMEOUT_MS / 1000} s`);
    await delay(POLL_MS);
  }
}

/** Waits until nothing is left under `prefix`: revoked transfers' objects are deleted by their workflows. */
export async function waitUntilGone(s3: S3Client, bucket: string, prefix: string): Promise<void> {
  const deadline = Date.now() + CLEANUP_TIMEOUT_MS;
  for (;;) {
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    const left = (listed.Contents ?? []).map((object) => object.Key);
    if (left.length === 0) return;
    if (Date.now() > deadline) {
      log(`objects still in MinIO after ${CLEANUP_TIMEOUT_MS / 1000} s: ${left.join(', ')}`);
      process.exitCode = 1;
      return;
    }
    await delay(1000);
  }
}

// --- a worker of the bench's own ----------------------------------------------------------------------------------

/** Node processes running workers/main.ts on `taskQueue` (a process without the variable polls the default). */
export function workersOnQueue(taskQueue: string, defaultQueue = 'valise'): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (basename(cmdline[0] ?? '') !== 'node' || !cmdline.some((arg) => arg.endsWith('workers/main.ts'))) continue;
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      const queue = environ.find((line) => line.startsWith('TEMPORAL_TASK_QUEUE='))?.slice(20) ?? defaultQueue;
      if (queue === taskQueue) pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return pids;
}

/**
 * A worker (workers/main.ts) as a child process on the environment's TEMPORAL_TASK_QUEUE, its
 * output in `logFile`, so the bench knows its pid for its memory and stops it at the end. Any
 * other worker on that queue would take part of the work and hide it from the figures: refused.
 */
export async function startChildWorker(taskQueue: string, logFile: string, env: Record<string, string> = {}) {
  const others = workersOnQueue(taskQueue);
  if (others.length > 0) {
    throw new Error(
      `worker(s) ${others.join(', ')} already poll task queue ${taskQueue}: stop them, or set TEMPORAL_TASK_QUEUE to a queue of the bench's own`,
    );
  }
  mkdirSync(dirname(logFile), { recursive: true });
  const output = openSync(logFile, 'w');
  const child = spawn('sh', ['scripts/node.sh', 'workers/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env, TEMPORAL_TASK_QUEUE: taskQueue },
    stdio: ['ignore', output, output],
  });
  const exited = once(child, 'exit');
  const deadline = Date.now() + 60_000;
  // The worker has started once node runs workers/main.ts under the child's pid (sh execs it).
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the worker exited, see ${logFile}`);
    if (child.pid !== undefined && workersOnQueue(taskQueue).includes(child.pid)) break;
    if (Date.now() > deadline) throw new Error('the worker did not start within 60 s');
    await delay(250);
  }
  const pid = child.pid as number;
  return { pid, stop: () => stopChild(child, exited) };
}
