import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { loadConfig } from '../lib/config.ts';
import { deriveKey } from '../lib/crypto/secrets.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { createTransferQueries } from '../lib/db/queries/transfers.ts';
import { createObjectStore } from '../lib/storage/object-store.ts';
import { bootstrapWorkspace } from '../lib/workspaces/bootstrap.ts';
import { runContext, writeResults } from './results.ts';
import {
  apiClient,
  drain,
  GiB,
  generated,
  getStream,
  log,
  mib,
  opensslSpeed,
  putStream,
  type Row,
  round,
  row,
  sampled,
  startChildApi,
  timed,
  waitUntilActive,
  waitUntilGone,
} from './streaming.ts';

// "Download all as ZIP" streamed by the API (GET /v1/archives/{token}) for a bundle of
// BENCH_FILES files totalling BENCH_BYTES, against its ceilings in the same run: a raw MinIO GET
// of the same stored objects one after the other, and `openssl speed` AES-256-GCM; with the
// API's RSS sampled from /proc during the archive. Usage: sh scripts/node.sh bench/zip.ts
// (bench/README.md has the details). A worker on TEMPORAL_TASK_QUEUE must be running: it scans.

const TOTAL = Number(process.env.BENCH_BYTES ?? GiB);
const FILES = Number(process.env.BENCH_FILES ?? 4);

async function main() {
  const startedAt = new Date();
  const config = loadConfig();
  const objects = createObjectStore(config.s3);
  const db = await createDatabasePool(config.database.url, 2);
  const run = randomBytes(6).toString('hex');
  const sizes = Array.from({ length: FILES }, (_, i) =>
    i < FILES - 1 ? Math.floor(TOTAL / FILES) : TOTAL - Math.floor(TOTAL / FILES) * (FILES - 1),
  );
  let stopApi: (() => Promise<void>) | null = null;
  let cleanup: (() => Promise<void>) | null = null;
  try {
    log(`${FILES} files, ${TOTAL} bytes; task queue ${config.temporal.taskQueue}`);
    log('openssl speed -evp aes-256-gcm -seconds 3 (about 20 s)…');
    const crypto = await opensslSpeed();
    const workspace = await bootstrapWorkspace(
      db,
      { apiKeyPepper: deriveKey(config.secret, 'api-key-hash'), seal: deriveKey(config.secret, 'seal') },
      { workspaceName: 'Bench ZIP', ownerEmail: `bench-zip-${run}@example.com` },
    );
    const child = await startChildApi();
    stopApi = child.stop;
    const api = apiClient(child.url, workspace.keys.live);
    log(`API pid ${child.pid} on ${child.url}; uploading ${FILES} files…`);
    const created = await api('POST', '/v1/transfers', {
      transfer_title: `bench zip ${run}`,
      expires_in_hours: 1,
      files: sizes.map((size, i) => ({ name: `part-${i}.bin`, size })),
    });
    const id = created.transfer.id as string;
    cleanup = async () => {
      await api('DELETE', `/v1/transfers/${id}`).catch((error: Error) => log(`DELETE ${id}: ${error.message}`));
      await waitUntilGone(objects.client, objects.bucket, `live/${workspace.workspace_id}/`);
    };
    for (const [i, size] of sizes.entries()) await putStream(created.upload_urls[i].url, generated(size).stream, size);
    log('waiting for the scan…');
    await waitUntilActive(api, id);

    const rows: Row[] = [];
    const stored = await createTransferQueries(db).files(id);
    log('raw MinIO GET of the stored objects…');
    const raw = await timed(async () => {
      let bytes = 0;
      for (const file of stored) bytes += (await drain((await objects.read(file.object_key)) as Readable)).bytes;
      return bytes;
    });
    rows.push(row('raw MinIO GET, the stored objects in turn', raw.value, raw.seconds));

    log('ZIP through the API…');
    const link = await api('POST', `/v1/shares/${created.transfer.short_code}/archive-link`, {});
    const zip = await sampled(child.pid, 'ZIP stream', async () => drain(await getStream(link.archive_url)));
    if (zip.value.bytes !== link.size) throw new Error(`the archive has ${zip.value.bytes} bytes, not ${link.size}`);
    rows.push(row('Valise ZIP (decrypt + CRC-32 + ZIP framing)', zip.value.bytes, zip.seconds));
    const ratio = round((rows[1]?.mb_per_s ?? 0) / (rows[0]?.mb_per_s ?? 1), 2);
    const markdown = [
      '| measure | bytes | seconds | MB/s |',
      '|---|---:|---:|---:|',
      ...rows.map((r) => `| ${r.measure} | ${r.bytes} | ${r.seconds} | ${r.mb_per_s} |`),
      `| openssl speed AES-256-GCM (${crypto.block_bytes}-byte blocks, one core) | | | ${crypto.mb_per_s} |`,
      '',
      `ZIP / raw GET: ${ratio}`,
      '',
      '| API RSS (MiB) | baseline | peak (100 ms samples) | peak − baseline | kernel peak (VmHWM) |',
      '|---|---:|---:|---:|---:|',
      `| ${zip.rss.phase} | ${mib(zip.rss.baseline_kib)} | ${mib(zip.rss.peak_kib)} | ${mib(zip.rss.growth_kib)} | ${zip.rss.kernel_peak_kib === null ? 'n/a' : mib(zip.rss.kernel_peak_kib)} |`,
    ].join('\n');
    return {
      startedAt,
      report: {
        ...runContext(startedAt),
        settings: { bytes: TOTAL, files: FILES, archive_bytes: link.size },
        rows,
        ratio_zip_over_raw: ratio,
        crypto,
        rss: zip.rss,
        markdown,
      },
    };
  } finally {
    log('cleaning up…');
    await cleanup?.();
    await stopApi?.();
    await db.end();
  }
}

const { startedAt, report } = await main();
console.log(report.markdown);
log(`wrote ${writeResults('zip', startedAt, report)}`);
