import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { loadConfig } from '../lib/config.ts';
import { deriveKey } from '../lib/crypto/secrets.ts';
import { createEncryptStream, DEFAULT_SEGMENT_SIZE, encryptedSize } from '../lib/crypto/segmented-aead.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { createObjectStore } from '../lib/storage/object-store.ts';
import { bootstrapWorkspace } from '../lib/workspaces/bootstrap.ts';
import { runContext, writeResults } from './results.ts';
import {
  type Api,
  apiClient,
  curl,
  curlS3Auth,
  drain,
  GiB,
  generated,
  getStream,
  log,
  MiB,
  mbPerSecond,
  round,
  sampled,
  startChildApi,
  waitUntilActive,
  waitUntilGone,
} from './streaming.ts';

// Downloads of one large file with curl as the client on every side (issue #26), in one run:
// a raw GET straight from MinIO, a Valise download of an end-to-end file (the API passes the
// stored ciphertext through) and of a server-mode file (the API decrypts). Rounds alternate them,
// so they share the machine's moods; medians and ratios are the figures.
// Usage: sh scripts/node.sh bench/downloads.ts    (bench/README.md has the details)
//
// A worker on TEMPORAL_TASK_QUEUE must be running: it scans the server-mode file, and deletes the
// transfers' objects at the end. Each kind of download is served by an API of its own (a child
// process): with BENCH_CPU_PROF_DIR each writes a CPU profile of that kind of download alone.
// BENCH_BASE_ROOT names another checkout (the commit to compare with): its APIs serve the same
// downloads in the same rounds. BENCH_FIXTURES keeps the file and transfers between runs (the
// server-mode file's scan takes minutes on a busy machine).

const SIZE = Number(process.env.BENCH_BYTES ?? GiB);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PROFILE_DIR = process.env.BENCH_CPU_PROF_DIR ?? null;
const BASE_ROOT = process.env.BENCH_BASE_ROOT ?? null;
const FIXTURES = process.env.BENCH_FIXTURES ?? null;

type Mode = 'raw' | 'e2e' | 'server';
type Served = Exclude<Mode, 'raw'>;
const DESCRIPTIONS: Record<Mode, string> = {
  raw: 'curl GET from MinIO (SigV4)',
  e2e: 'curl GET from Valise, end-to-end file (ciphertext passed through)',
  server: 'curl GET from Valise, server-mode file (decrypted by the API)',
};

/** What the downloads need, kept between runs with BENCH_FIXTURES: the objects, the transfers, the key that revokes them. */
type Fixtures = {
  size: number;
  blob_size: number;
  raw_url: string;
  sha256: { plain: string; blob: string };
  key: string;
  workspace_prefix: string;
  transfers: Record<Served, { id: string; code: string }>;
};

/** One way of downloading: its mode, and the API that serves it (none for the raw GET). */
type Target = { name: string; mode: Mode; api: { url: string; pid: number } | null };

type Sample = {
  seconds: number;
  /** CPU-seconds in the download: the API (all threads, and its main thread), MinIO, curl. */
  cpu: { api: number | null; api_main: number | null; minio: number | null; curl: number };
};

/** CPU-seconds (user + system) of this process's children that have ended: curl's, once it exits. */
function childrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  // cutime and cstime, the 16th and 17th fields of the line: the 14th and 15th after the name.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

const expectCurl = (what: string, result: Awaited<ReturnType<typeof curl>>, bytes: number) => {
  const moved = Math.max(result.uploaded, result.downloaded);
  if (result.status !== 200 || moved !== bytes)
    throw new Error(`${what}: curl got ${result.status} after ${moved} bytes`);
  return result.seconds;
};

/**
 * The file in MinIO as is, and through Valise as an end-to-end blob (VAL1, a key of its own, as a
 * client uploads it) and as a server-mode file, all uploaded with curl; waits for the scan.
 */
async function makeFixtures(control: Api, key: string, workspacePrefix: string, scratch: string): Promise<Fixtures> {
  const config = loadConfig();
  const run = randomBytes(6).toString('hex');
  const rawUrl = `${config.s3.endpoint.replace(/\/$/, '')}/${config.s3.bucket}/bench/${run}-download`;
  log(`writing ${SIZE} bytes and their end-to-end blob to ${scratch}…`);
  const plainPath = join(scratch, 'plain.bin');
  const blobPath = join(scratch, 'blob.val1');
  const plain = generated(SIZE, randomBytes(MiB));
  await pipeline(plain.stream, createWriteStream(plainPath));
  const blobSize = encryptedSize(SIZE, DEFAULT_SEGMENT_SIZE);
  await pipeline(
    createReadStream(plainPath, { highWaterMark: MiB }),
    createEncryptStream({ key: randomBytes(32), plaintextSize: SIZE }),
    createWriteStream(blobPath),
  );
  const blobSha256 = (await drain(createReadStream(blobPath, { highWaterMark: MiB }))).sha256;
  expectCurl('curl PUT to MinIO', await curl([...curlS3Auth(config.s3), '-T', plainPath, rawUrl]), SIZE);
  const upload = async (mode: Served, path: string, size: number) => {
    const created = await control('POST', '/v1/transfers', {
      files: [{ name: `bench-${mode}.bin`, size }],
      transfer_title: `bench downloads ${mode}`,
      expires_in_hours: 24,
      ...(mode === 'e2e' ? { encryption_mode: 'e2e' } : {}),
    });
    const put = await curl(['-H', 'content-type: application/octet-stream', '-T', path, created.upload_urls[0].url]);
    expectCurl(`curl PUT to Valise (${mode})`, put, size);
    return { id: created.transfer.id as string, code: created.transfer.short_code as string };
  };
  log('uploading the end-to-end blob and the server-mode file; waiting for the scan…');
  const transfers = { e2e: await upload('e2e', blobPath, blobSize), server: await upload('server', plainPath, SIZE) };
  rmSync(plainPath);
  rmSync(blobPath);
  await waitUntilActive(control, transfers.e2e.id);
  await waitUntilActive(control, transfers.server.id);
  return {
    size: SIZE,
    blob_size: blobSize,
    raw_url: rawUrl,
    sha256: { plain: plain.sha256(), blob: blobSha256 },
    key,
    workspace_prefix: workspacePrefix,
    transfers,
  };
}

async function main() {
  const startedAt = new Date();
  const config = loadConfig();
  const { client: s3, bucket: Bucket } = createObjectStore(config.s3);
  const s3Auth = curlS3Auth(config.s3);
  const db = await createDatabasePool(config.database.url, 2);
  const scratch = mkdtempSync(join(tmpdir(), 'valise-bench-'));
  const stops: Array<() => Promise<void>> = [];
  let fixtures: Fixtures | null = null;
  let control: Api | null = null;

  try {
    // One API for uploads and download links; one per kind of download and checkout, so each
    // profile holds that download alone.
    const controlApi = await startChildApi({ cpuProfDir: null });
    stops.push(controlApi.stop);
    if (FIXTURES && existsSync(FIXTURES)) {
      fixtures = JSON.parse(readFileSync(FIXTURES, 'utf8')) as Fixtures;
      control = apiClient(controlApi.url, fixtures.key);
      log(`reusing the transfers of ${FIXTURES}`);
    } else {
      const run = randomBytes(6).toString('hex');
      const workspace = await bootstrapWorkspace(
        db,
        { apiKeyPepper: deriveKey(config.secret, 'api-key-hash'), seal: deriveKey(config.secret, 'seal') },
        { workspaceName: 'Bench downloads', ownerEmail: `bench-downloads-${run}@example.com` },
      );
      control = apiClient(controlApi.url, workspace.keys.live);
      fixtures = await makeFixtures(control, workspace.keys.live, `live/${workspace.workspace_id}/`, scratch);
      if (FIXTURES) writeFileSync(FIXTURES, JSON.stringify(fixtures));
    }
    const kept = fixtures;
    const controlClient = control;

    const targets: Target[] = [{ name: 'raw', mode: 'raw', api: null }];
    for (const [checkout, root] of [['', undefined], ...(BASE_ROOT ? [['base ', BASE_ROOT]] : [])] as const) {
      for (const mode of ['e2e', 'server'] as const) {
        const name = `${checkout}${mode}`;
        const dir = PROFILE_DIR && join(PROFILE_DIR, name.replace(' ', '-'));
        const api = await startChildApi({ cpuProfDir: dir, ...(root ? { root } : {}) });
        stops.push(api.stop);
        targets.push({ name, mode, api });
      }
    }
    log(`APIs: ${targets.map((t) => `${t.name} ${t.api?.pid ?? '-'}`).join(', ')}`);
    const sizes: Record<Mode, number> = { raw: kept.size, e2e: kept.blob_size, server: kept.size };
    const expected: Record<Mode, string> = { raw: kept.sha256.plain, e2e: kept.sha256.blob, server: kept.sha256.plain };

    /** A fresh download link (each serves its file once), pointed at the target's API. */
    const downloadUrl = async (target: Target) => {
      const code = kept.transfers[target.mode as Served].code;
      const links = await controlClient('POST', `/v1/shares/${code}/download-links`, {});
      return `${target.api?.url}${new URL(links.files[0].download_url).pathname}`;
    };

    // Every copy must be the bytes sent: checked once per target with a Node client, not timed.
    log('checking what each download serves…');
    for (const target of targets) {
      const body = target.api ? await getStream(await downloadUrl(target)) : rawStream(kept.raw_url, s3Auth);
      const { sha256 } = await drain(body);
      if (sha256 !== expected[target.mode]) throw new Error(`${target.name}: SHA-256 ${sha256} is not the file's`);
    }

    const one = async (target: Target): Promise<Sample> => {
      const args = target.api ? [await downloadUrl(target)] : [...s3Auth, kept.raw_url];
      const curlBefore = childrenCpuSeconds();
      // The raw GET samples an idle API: MinIO's CPU is what it reports.
      const pid = target.api?.pid ?? controlApi.pid;
      const measured = await sampled(pid, target.name, () => curl(args));
      const seconds = expectCurl(target.name, measured.value, sizes[target.mode]);
      const cpu = measured.rss.cpu_seconds;
      return {
        seconds,
        cpu: {
          api: target.api ? cpu.api : null,
          api_main: target.api ? (cpu.api_threads?.main ?? null) : null,
          minio: cpu.minio,
          curl: round(childrenCpuSeconds() - curlBefore, 2),
        },
      };
    };

    log('warm-up: one download of each, not measured…');
    for (const target of targets) await one(target);
    const samples = new Map<string, Sample[]>(targets.map((t) => [t.name, []]));
    const rounds: Array<Record<string, number>> = [];
    for (let r = 0; r < ROUNDS; r++) {
      // Each round starts with another target, so none is always first after a pause.
      const order = targets.map((_, i) => targets[(i + r) % targets.length] as Target);
      const seconds: Record<string, number> = {};
      for (const target of order) {
        const sample = await one(target);
        samples.get(target.name)?.push(sample);
        seconds[target.name] = sample.seconds;
        log(`round ${r + 1} ${target.name}: ${mbPerSecond(sizes[target.mode], sample.seconds)} MB/s`);
      }
      rounds.push(seconds);
    }

    const rows = targets.map((target) => {
      const list = samples.get(target.name) ?? [];
      const bytes = sizes[target.mode];
      const seconds = median(list.map((s) => s.seconds));
      const perGib = (pick: (s: Sample) => number | null) => {
        const values = list.map(pick).filter((v): v is number => v !== null);
        return values.length ? round(median(values) / (bytes / GiB), 2) : null;
      };
      // Ratios of speeds in MB/s, so the blob's 256 KiB of tags count as bytes moved.
      const speed = (round_: Record<string, number>, name: string, mode: Mode) =>
        sizes[mode] / (round_[name] as number);
      const perRound = rounds.map((r) => round(speed(r, target.name, target.mode) / speed(r, 'raw', 'raw')));
      return {
        name: target.name,
        measure: `${target.name.startsWith('base') ? 'base: ' : ''}${DESCRIPTIONS[target.mode]}`,
        bytes,
        seconds: round(seconds, 3),
        mb_per_s: mbPerSecond(bytes, seconds),
        rounds_mb_per_s: list.map((s) => mbPerSecond(bytes, s.seconds)),
        ratio_to_raw: { median_of_rounds: round(median(perRound)), per_round: perRound },
        cpu_seconds_per_gib: {
          api: perGib((s) => s.cpu.api),
          api_main: perGib((s) => s.cpu.api_main),
          minio: perGib((s) => s.cpu.minio),
          curl: perGib((s) => s.cpu.curl),
        },
      };
    });
    return {
      startedAt,
      report: {
        ...runContext(startedAt),
        load_average: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number),
        settings: { bytes: kept.size, e2e_blob_bytes: kept.blob_size, rounds: ROUNDS, base_root: BASE_ROOT },
        rows,
        markdown: table(rows),
      },
    };
  } finally {
    log('cleaning up…');
    if (fixtures && !process.env.BENCH_KEEP) {
      // Revoking hands the deletion of the objects to each transfer's workflow: the worker must still run.
      for (const { id } of Object.values(fixtures.transfers)) {
        await control?.('DELETE', `/v1/transfers/${id}`).catch((error: Error) => log(`DELETE ${id}: ${error.message}`));
      }
      await curl([...s3Auth, '-X', 'DELETE', fixtures.raw_url]).catch(() => undefined);
      if (FIXTURES) rmSync(FIXTURES, { force: true });
    }
    for (const stop of stops) await stop();
    if (fixtures && !process.env.BENCH_KEEP) await waitUntilGone(s3, Bucket, fixtures.workspace_prefix);
    rmSync(scratch, { recursive: true, force: true });
    await db.end();
  }
}

/** The raw object, signed by curl's SigV4 and read by Node: for the check of its bytes only. */
function rawStream(url: string, s3Auth: string[]) {
  const child = spawn('curl', ['-sS', '--fail', ...s3Auth, url], { stdio: ['ignore', 'pipe', 'inherit'] });
  return child.stdout;
}

type Rows = Array<{
  measure: string;
  bytes: number;
  seconds: number;
  mb_per_s: number;
  rounds_mb_per_s: number[];
  ratio_to_raw: { median_of_rounds: number; per_round: number[] };
  cpu_seconds_per_gib: { api: number | null; api_main: number | null; minio: number | null; curl: number | null };
}>;

function table(rows: Rows) {
  const cell = (value: number | null) => (value === null ? '' : value.toFixed(2));
  return [
    '| measure | median s | MB/s | rounds MB/s | × raw GET: median of rounds (per round) | CPU s per GiB: API (main thread), MinIO, curl |',
    '|---|---:|---:|---|---|---:|',
    ...rows.map((r) => {
      const cpu = r.cpu_seconds_per_gib;
      const api = cpu.api === null ? '' : `${cell(cpu.api)} (${cell(cpu.api_main)}), `;
      const ratio = `${r.ratio_to_raw.median_of_rounds.toFixed(2)} (${r.ratio_to_raw.per_round.map((v) => v.toFixed(2)).join(', ')})`;
      return `| ${r.measure} | ${r.seconds.toFixed(2)} | ${r.mb_per_s.toFixed(0)} | ${r.rounds_mb_per_s.map((v) => v.toFixed(0)).join(', ')} | ${ratio} | ${api}${cell(cpu.minio)}, ${cell(cpu.curl)} |`;
    }),
  ].join('\n');
}

const { startedAt, report } = await main();
console.log(report.markdown);
const file = writeResults('downloads', startedAt, report);
log(`wrote ${file}`);
