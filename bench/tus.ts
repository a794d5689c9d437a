import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { Upload } from 'tus-js-client';
import { loadConfig } from '../lib/config.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { createObjectStore } from '../lib/storage/object-store.ts';
import { PART_PLAINTEXT } from '../lib/uploads/parts.ts';
import { runContext, writeResults } from './results.ts';
import {
  type Api,
  apiClient,
  GiB,
  generated,
  log,
  MiB,
  putStream,
  type Row,
  round,
  row,
  startChildApi,
  timed,
  waitUntilGone,
} from './streaming.ts';
import { type BenchWorkspace, createBenchWorkspaces, deleteBenchWorkspaces } from './workspaces.ts';

// A 1 GiB file uploaded over tus (tus-js-client, 8 MiB chunks: one PATCH per part) beside the
// same file as one plain PUT and as one raw PutObject straight to MinIO, in alternating rounds so
// that the three share the machine's moods; the median of each. The file is written once to a
// temporary folder and read from there (the page cache) by every upload, as a client sends a file. Only the upload is timed (the scan
// that follows is the same for both ways in: bench/transfers.ts measures it).
// Usage: sh scripts/node.sh bench/tus.ts    (bench/README.md has the details)

const SIZE = Number(process.env.BENCH_BYTES ?? GiB);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CHUNK = Number(process.env.BENCH_TUS_CHUNK ?? PART_PLAINTEXT);
const WARMUP_SIZE = Number(process.env.BENCH_WARMUP_BYTES ?? 64 * MiB);

async function createTransfer(api: Api, name: string, size: number) {
  const created = await api('POST', '/v1/transfers', { files: [{ name, size }], expires_in_hours: 1 });
  return { id: created.transfer.id as string, uploadUrl: created.upload_urls[0].url as string };
}

/**
 * One tus upload of the file at `path` to `uploadUrl` (HEAD, then PATCHes of `chunk` bytes), as
 * tus-js-client uploads a file from disk: each chunk a read stream of its own range.
 */
function tusUpload(uploadUrl: string, path: string, chunk: number): Promise<void> {
  return new Promise((resolve, reject) => {
    new Upload(createReadStream(path), {
      uploadUrl,
      chunkSize: chunk,
      retryDelays: null,
      onSuccess: () => resolve(),
      onError: reject,
    }).start();
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
};

async function main() {
  const startedAt = new Date();
  const config = loadConfig();
  const { client: s3, bucket: Bucket } = createObjectStore(config.s3);
  const db = await createDatabasePool(config.database.url, 2);
  const run = randomBytes(6).toString('hex');
  const rawKey = `bench/${run}-tus-raw`;
  const scratch = mkdtempSync(join(tmpdir(), 'valise-bench-tus-'));
  const path = join(scratch, 'upload.bin');
  const transferIds: string[] = [];
  let workspaces: BenchWorkspace[] = [];
  let api: Api | null = null;
  let stopApi: (() => Promise<void>) | null = null;
  try {
    const { measured, noise } = await createBenchWorkspaces(db, config, 'tus');
    workspaces = [measured, noise];
    const child = await startChildApi();
    stopApi = child.stop;
    const client = apiClient(child.url, measured.keys.live);
    api = client;
    await pipeline(generated(SIZE).stream, createWriteStream(path));
    log(`${SIZE} bytes, ${ROUNDS} rounds, tus chunks of ${CHUNK} bytes; API pid ${child.pid} on ${child.url}`);

    const upload = async (name: string, send: (url: string) => Promise<unknown>) => {
      const transfer = await createTransfer(client, name, SIZE);
      transferIds.push(transfer.id);
      return timed(() => send(transfer.uploadUrl));
    };
    if (WARMUP_SIZE > 0) {
      log('warm-up…');
      const warmPath = join(scratch, 'warm.bin');
      await pipeline(generated(WARMUP_SIZE).stream, createWriteStream(warmPath));
      const warmPut = await createTransfer(client, 'warm-put.bin', WARMUP_SIZE);
      const warmTus = await createTransfer(client, 'warm-tus.bin', WARMUP_SIZE);
      transferIds.push(warmPut.id, warmTus.id);
      await putStream(warmPut.uploadUrl, createReadStream(warmPath), WARMUP_SIZE);
      await tusUpload(warmTus.uploadUrl, warmPath, CHUNK);
    }

    const seconds: Record<'raw' | 'put' | 'tus' | 'tusWhole', number[]> = { raw: [], put: [], tus: [], tusWhole: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      log(`round ${round}: raw PutObject…`);
      const raw = await timed(() =>
        s3.send(new PutObjectCommand({ Bucket, Key: rawKey, Body: createReadStream(path), ContentLength: SIZE })),
      );
      seconds.raw.push(raw.seconds);
      await s3.send(new DeleteObjectCommand({ Bucket, Key: rawKey }));
      log(`round ${round}: Valise PUT…`);
      const put = await upload(`put-${round}.bin`, (url) => putStream(url, createReadStream(path), SIZE));
      seconds.put.push(put.seconds);
      log(`round ${round}: Valise tus…`);
      const tus = await upload(`tus-${round}.bin`, (url) => tusUpload(url, path, CHUNK));
      seconds.tus.push(tus.seconds);
      log(`round ${round}: Valise tus, one PATCH…`);
      const tusWhole = await upload(`tus-whole-${round}.bin`, (url) => tusUpload(url, path, Number.POSITIVE_INFINITY));
      seconds.tusWhole.push(tusWhole.seconds);
      log(
        `round ${round}: raw ${raw.seconds.toFixed(2)} s, PUT ${put.seconds.toFixed(2)} s, tus ${tus.seconds.toFixed(2)} s, tus one PATCH ${tusWhole.seconds.toFixed(2)} s`,
      );
    }

    const rows: Row[] = [
      row('raw PUT to MinIO (PutObject, one stream)', SIZE, median(seconds.raw)),
      row('Valise PUT (one request, encrypt, 8 MiB parts)', SIZE, median(seconds.put)),
      row(`Valise tus (tus-js-client, ${CHUNK / MiB} MiB PATCHes, encrypt, 8 MiB parts)`, SIZE, median(seconds.tus)),
      row('Valise tus (tus-js-client, chunkSize unset: one PATCH)', SIZE, median(seconds.tusWhole)),
    ];
    const ratios = {
      'tus 8 MiB / PUT (throughput)': round(median(seconds.put) / median(seconds.tus)),
      'tus one PATCH / PUT (throughput)': round(median(seconds.put) / median(seconds.tusWhole)),
      'tus 8 MiB / raw PutObject (throughput)': round(median(seconds.raw) / median(seconds.tus)),
      'PUT / raw PutObject (throughput)': round(median(seconds.raw) / median(seconds.put)),
    };
    const gib = (bytes: number) => `${round(bytes / GiB, 2)} GiB`;
    const markdown = [
      '| measure (median of rounds) | bytes | seconds | MB/s |',
      '|---|---:|---:|---:|',
      ...rows.map((r) => `| ${r.measure} | ${gib(r.bytes)} | ${r.seconds.toFixed(2)} | ${r.mb_per_s.toFixed(0)} |`),
      '',
      '| ratio | value |',
      '|---|---:|',
      ...Object.entries(ratios).map(([name, value]) => `| ${name} | ${value.toFixed(2)} |`),
      '',
      `Rounds (s): ${Object.entries(seconds)
        .map(([name, values]) => `${name} ${values.map((value) => value.toFixed(2)).join(', ')}`)
        .join('; ')}.`,
    ].join('\n');
    return {
      startedAt,
      report: {
        ...runContext(startedAt),
        settings: { bytes: SIZE, rounds: ROUNDS, tus_chunk: CHUNK, warmup_bytes: WARMUP_SIZE, api_pid: child.pid },
        seconds,
        rows,
        ratios,
        markdown,
      },
    };
  } finally {
    log('cleaning up…');
    for (const id of transferIds) {
      await api?.('DELETE', `/v1/transfers/${id}`).catch((error: Error) => log(`DELETE ${id}: ${error.message}`));
    }
    await stopApi?.();
    await s3.send(new DeleteObjectCommand({ Bucket, Key: rawKey })).catch(() => undefined);
    // The revoked transfers' objects go first (the worker deletes them), while their rows still say where.
    const measured = workspaces[0];
    if (measured)
      await waitUntilGone(s3, Bucket, `live/${measured.workspace_id}/`).catch((error: Error) => log(error.message));
    await deleteBenchWorkspaces(db, workspaces);
    rmSync(scratch, { recursive: true, force: true });
    await db.end();
  }
}

const { startedAt, report } = await main();
console.log(report.markdown);
log(`wrote ${writeResults('tus', startedAt, report)}`);
