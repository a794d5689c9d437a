import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { loadConfig } from '../lib/config.ts';
import { deriveKey } from '../lib/crypto/secrets.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { createObjectStore } from '../lib/storage/object-store.ts';
import { bootstrapWorkspace } from '../lib/workspaces/bootstrap.ts';
import { generateIntakeKeyPair } from '../sdk/src/crypto/intake-envelope.ts';
import { createEncryptStream, generateKey, generateNoncePrefix } from '../sdk/src/crypto/val1.ts';
import { type FileSource, type IntakeDocument, Valise } from '../sdk/src/index.ts';
import { runContext, writeResults } from './results.ts';
import { opensslSpeed, startChildApi } from './streaming.ts';

// Intake upload throughput through the SDK's `intakes.send` (what the CLI's
// `valise intake submit` runs), in both modes: server (plaintext over the
// wire, sealed by the API) and e2e_asym with X-Wing (VAL1-encrypted by the
// client, stored as is). Beside them, in the same run: the same bytes PUT
// straight to MinIO, the SDK's VAL1 encryption alone (no network), and
// openssl's AES-256-GCM on one core.
// Usage: sh scripts/node.sh bench/intakes.ts    (bench/README.md has the details)
// A worker on TEMPORAL_TASK_QUEUE must be running: it scans server-mode documents.

const MiB = 1024 * 1024;
const SIZE = Number(process.env.BENCH_BYTES ?? 256 * MiB);
const WAIT_MS = 15 * 60_000;
const BLOCK = randomBytes(MiB);

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** `size` bytes of one random 1 MiB block repeated, as a web stream from `start`: never held whole. */
function generatedStream(size: number, start = 0): ReadableStream<Uint8Array> {
  let offset = start;
  return new ReadableStream({
    pull(controller) {
      if (offset >= size) return controller.close();
      const at = offset % BLOCK.length;
      const chunk = BLOCK.subarray(at, Math.min(BLOCK.length, at + size - offset));
      offset += chunk.length;
      controller.enqueue(new Uint8Array(chunk));
    },
  });
}

/** The same bytes as a Node stream, for the S3 client (whose checksums want one). */
function generatedReadable(size: number): Readable {
  let offset = 0;
  return new Readable({
    read() {
      if (offset >= size) return void this.push(null);
      const chunk = BLOCK.subarray(0, Math.min(BLOCK.length, size - offset));
      offset += chunk.length;
      this.push(chunk);
    },
  });
}

const source = (name: string): FileSource => ({ name, size: SIZE, stream: (start) => generatedStream(SIZE, start) });

async function sha256Of(stream: ReadableStream<Uint8Array>): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const start = performance.now();
  const value = await run();
  return { value, seconds: (performance.now() - start) / 1000 };
}

type Row = { measure: string; bytes: number; seconds: number; mb_per_s: number };
const row = (measure: string, bytes: number, seconds: number): Row => ({
  measure,
  bytes,
  seconds: round(seconds),
  mb_per_s: round(bytes / 1e6 / seconds, 1),
});

async function waitForDocument(owner: Valise, intakeId: string, docId: string, status: string) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const doc = await owner.intakes.getDocument(intakeId, docId);
    if (doc.status === status) return doc;
    if (['rejected', 'deleted'].includes(doc.status)) throw new Error(`document ${docId} ended ${doc.status}`);
    if (Date.now() > deadline) throw new Error(`document ${docId} not ${status} after ${WAIT_MS / 1000} s`);
    await delay(200);
  }
}

async function waitUntilGone(s3: S3Client, bucket: string, prefix: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while ((await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }))).KeyCount) {
    if (Date.now() > deadline) {
      log(`objects still under ${prefix} after ${WAIT_MS / 1000} s`);
      return;
    }
    await delay(500);
  }
}

async function main() {
  const startedAt = new Date();
  const run = startedAt.getTime().toString(36);
  const config = loadConfig();
  const { client: s3, bucket: Bucket } = createObjectStore(config.s3);
  const db = await createDatabasePool(config.database.url, 2);
  const rawKey = `bench/${run}-intake-raw`;
  let stopApi = async () => {};
  let cleanup = async () => {};
  try {
    log('openssl speed -evp aes-256-gcm -seconds 3 (about 20 s)…');
    const crypto = await opensslSpeed();
    const workspace = await bootstrapWorkspace(
      db,
      { apiKeyPepper: deriveKey(config.secret, 'api-key-hash'), seal: deriveKey(config.secret, 'seal') },
      { workspaceName: 'Bench intakes', ownerEmail: `bench-intakes-${run}@example.com` },
    );
    const child = await startChildApi();
    stopApi = child.stop;
    log(`API pid ${child.pid} on ${child.url}`);
    const owner = new Valise({ apiKey: workspace.keys.live, baseUrl: child.url });
    const intakeIds: string[] = [];
    cleanup = async () => {
      // Deleting an intake hands its blobs to the deletion workflows: the worker must still be running.
      for (const id of intakeIds) await owner.intakes.delete(id).catch(() => undefined);
      await waitUntilGone(s3, Bucket, `live/${workspace.workspace_id}/`);
    };
    const expected = (await sha256Of(generatedStream(SIZE))).sha256;
    const rows: Row[] = [];

    log(`raw PutObject of ${SIZE} bytes…`);
    const raw = await timed(() =>
      s3.send(new PutObjectCommand({ Bucket, Key: rawKey, Body: generatedReadable(SIZE), ContentLength: SIZE })),
    );
    rows.push(row('raw PUT to MinIO (PutObject, one stream)', SIZE, raw.seconds));
    await s3.send(new DeleteObjectCommand({ Bucket, Key: rawKey }));

    log('VAL1 encryption alone (the SDK, WebCrypto, no network)…');
    const sealing = await timed(async () => {
      const blob = generatedStream(SIZE).pipeThrough(
        createEncryptStream({ key: generateKey(), noncePrefix: generateNoncePrefix(), plaintextSize: SIZE }),
      );
      for await (const _ of blob); // read and dropped: the encryption's own speed
    });
    rows.push(row('SDK VAL1 encryption only (64 KiB segments, no network)', SIZE, sealing.seconds));

    // Server-mode documents are ready once scanned; end-to-end ones once stored (they cannot be scanned).
    const modes = [
      { label: 'server', kem: null, ready: 'available' },
      { label: 'e2e_asym, X-Wing', kem: 'MLKEM768-X25519' as const, ready: 'received' },
    ];
    const documents: Record<string, { id: string; scan_status: string }> = {};
    for (const mode of modes) {
      const pair = mode.kem ? await generateIntakeKeyPair(mode.kem) : null;
      const intake = await owner.intakes.create({
        title: `bench ${mode.label}`,
        ...(pair
          ? {
              owner_public_key: { kem: pair.kem, public_key: Buffer.from(pair.publicKey).toString('base64url') },
            }
          : { encryption_mode: 'server' as const }),
      });
      intakeIds.push(intake.id);
      const submitter = new Valise({ apiKey: intake.publishable_key.key, baseUrl: child.url });
      log(`intakes.send, ${mode.label}…`);
      const sent = await timed(() => submitter.intakes.send(intake.id, { files: [source('bench.bin')] }));
      rows.push(row(`Valise intakes.send, ${mode.label}`, SIZE, sent.seconds));
      const docId = sent.value.document.id;
      log(`waiting for ${docId} to be ${mode.ready}…`);
      const doc: IntakeDocument = await waitForDocument(owner, intake.id, docId, mode.ready);
      const file = doc.files[0];
      if (!file) throw new Error(`document ${docId} has no file`);
      const opened = await sha256Of(await owner.intakes.openFile(doc, file.id, { privateKey: pair?.privateKey }));
      if (opened.sha256 !== expected) throw new Error(`${mode.label}: the opened file differs from what was sent`);
      documents[mode.label] = { id: docId, scan_status: doc.scan_status };
    }

    const ceiling = rows[0]?.mb_per_s ?? 0;
    const lines = [
      `| measure | MiB | s | MB/s | × raw PUT |`,
      `|---|---:|---:|---:|---:|`,
      ...rows.map(
        (r) =>
          `| ${r.measure} | ${round(r.bytes / MiB, 0)} | ${r.seconds} | ${r.mb_per_s} | ${ceiling ? round(r.mb_per_s / ceiling) : '–'} |`,
      ),
      `| openssl AES-256-GCM, one core (${crypto.block_bytes}-byte blocks) | | | ${crypto.mb_per_s} | |`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    const file = writeResults('intakes', startedAt, {
      ...runContext(startedAt),
      settings: { bytes: SIZE },
      rows,
      openssl: crypto,
      documents,
    });
    log(`results in ${file}`);
  } finally {
    await cleanup().catch((error: Error) => log(`cleanup: ${error.message}`));
    await stopApi();
    await s3.send(new DeleteObjectCommand({ Bucket, Key: rawKey })).catch(() => undefined);
    await db.end();
  }
}

await main();
