import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import test from 'ava';
import pg from 'pg';
import { connectTemporal } from '../../lib/temporal.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from '../helpers/api.ts';
import { runCommand } from '../helpers/command.ts';
import { kill, startWorker } from '../helpers/processes.ts';
import { content, createTransfer, links, put, waitForTransfer } from '../helpers/transfers.ts';

// Master-key rotation end to end (docs/encryption.md, "Master keys"): files and a GDPR export are
// stored under key `rot-old`; the API and the workers are restarted with `rot-new` added and
// current; `admin keys rotate` re-wraps every value, while the worker running it is killed in the
// middle of a batch and replaced; everything downloads before, during and after; then `rot-old`
// leaves the keyring and everything still downloads. The test has a database and a task queue of
// its own: the rotation re-wraps every row of its database, and the other tests' rows are theirs.

const OLD = `rot-old:${randomBytes(32).toString('base64')}`;
const NEW = `rot-new:${randomBytes(32).toString('base64')}`;
const suffix = randomBytes(4).toString('hex');
const adminUrl = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/valise');
adminUrl.pathname = '/postgres';
const databaseUrl = new URL(adminUrl);
databaseUrl.pathname = `/valise_keyrot_${suffix}`;
const taskQueue = `keyrot-${suffix}`;

/** The environment of this test's processes, with `keys` as MASTER_KEYS (the last one current). */
const envWith = (keys: string[]) => ({
  DATABASE_URL: databaseUrl.href,
  TEMPORAL_TASK_QUEUE: taskQueue,
  MASTER_KEYS: keys.join(','),
});

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl.href });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** `npm run admin -- keys …` with `keys` as MASTER_KEYS: its exit code and the JSON it printed. */
async function keysCommand(keys: string[], ...args: string[]) {
  const result = await runCommand('sh', ['scripts/node.sh', 'scripts/admin.ts', 'keys', ...args, '--json'], {
    env: { ...process.env, ...envWith(keys) },
    timeoutMs: 120_000,
  });
  const line = result.stdout.trim().split('\n').at(-1) ?? '';
  return { code: result.code, json: line.startsWith('{') ? JSON.parse(line) : null, output: result.output };
}

/** SIGTERM, and wait for the worker to drain and exit (it drops its test schedule on the way). */
async function stop(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null || worker.signalCode !== null) return;
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  worker.kill('SIGTERM');
  const timer = setTimeout(() => worker.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

type Stored = { shortCode: string; files: Map<string, Buffer> };
const state = {
  api: undefined as TestApi | undefined,
  worker: undefined as ChildProcess | undefined,
  ws: undefined as TestWorkspace | undefined,
  transfers: [] as Stored[],
  exportId: '',
  db: undefined as pg.Client | undefined,
};

/** Restarts the API and the worker with `keys` as MASTER_KEYS. */
async function restart(keys: string[]): Promise<TestApi> {
  await state.api?.close();
  if (state.worker) await stop(state.worker);
  state.worker = startWorker(envWith(keys));
  state.api = await startApi(envWith(keys));
  return state.api;
}

test.before(async () => {
  await admin(`create database ${databaseUrl.pathname.slice(1)}`);
  const migrated = await runCommand('sh', ['scripts/node.sh', 'scripts/migrate.ts'], {
    env: { ...process.env, ...envWith([OLD]) },
  });
  if (migrated.code !== 0) throw new Error(migrated.output);
  state.db = new pg.Client({ connectionString: databaseUrl.href });
  await state.db.connect();
});
test.after.always(async () => {
  await state.api?.close();
  if (state.worker) await stop(state.worker);
  await state.db?.end();
  await admin(`drop database if exists ${databaseUrl.pathname.slice(1)} with (force)`);
});

/** Every stored file downloads byte for byte, and the GDPR export opens. */
async function everythingDownloads(t: import('ava').ExecutionContext, api: TestApi, when: string) {
  for (const transfer of state.transfers) {
    const issued = await links(api, transfer.shortCode);
    t.is(issued.status, 200, `${when}: ${issued.text}`);
    for (const file of issued.body.files as { file_id: string; download_url: string }[]) {
      const response = await fetch(file.download_url);
      t.is(response.status, 200, `${when}: file ${file.file_id}`);
      const bytes = Buffer.from(await response.arrayBuffer());
      t.true(bytes.equals(transfer.files.get(file.file_id) ?? Buffer.alloc(0)), `${when}: file ${file.file_id} intact`);
    }
  }
  const found = await api.call('GET', `/v1/gdpr/exports/${state.exportId}`, { key: state.ws?.keys.live });
  t.is(found.status, 200, `${when}: ${found.text}`);
  const document = await fetch(found.body.download_url);
  t.is(document.status, 200, `${when}: the GDPR export`);
  t.truthy(await document.json());
}

/** How many wrapped values each master key wraps, by the database itself. */
async function wrappedByKey(): Promise<Record<string, number>> {
  const rows = await state.db?.query<{ key_id: string; n: string }>(`
    SELECT split_part(data_key_wrapped, '.', 2) AS key_id, count(*) AS n FROM (
      SELECT data_key_wrapped FROM transfer_files UNION ALL SELECT data_key_wrapped FROM gdpr_exports
      UNION ALL SELECT data_key_wrapped FROM intake_files UNION ALL SELECT data_key_wrapped FROM coffre_items) v
    WHERE data_key_wrapped IS NOT NULL GROUP BY 1`);
  return Object.fromEntries((rows?.rows ?? []).map((row) => [row.key_id, Number(row.n)]));
}

const FILES_PER_TRANSFER = 6;

test.serial(
  'files and a GDPR export stored under the old key; the old key cannot be retired while they use it',
  async (t) => {
    const api = await restart([OLD]);
    state.ws = await api.workspace('Key rotation');
    const key = state.ws.keys.live;
    for (let n = 0; n < 2; n++) {
      const files = Array.from({ length: FILES_PER_TRANSFER }, (_, i) => ({
        name: `f${i}.bin`,
        data: content(70_000 + i),
      }));
      const created = await createTransfer(api, key, {
        files: files.map((f) => ({ name: f.name, size: f.data.length })),
      });
      const stored: Stored = { shortCode: created.transfer.short_code, files: new Map() };
      for (const [i, upload] of created.upload_urls.entries()) {
        const data = files[i]?.data ?? Buffer.alloc(0);
        t.is((await put(upload.url, data)).status, 200);
        stored.files.set(upload.file_id, data);
      }
      await waitForTransfer(api, key, created.transfer.id, (tr) => tr.status === 'active', 90_000);
      state.transfers.push(stored);
    }
    const requested = await api.call('POST', '/v1/gdpr/exports', { key, body: {} });
    t.is(requested.status, 202, requested.text);
    state.exportId = requested.body.id;
    await eventually(async () => {
      const found = await api.call('GET', `/v1/gdpr/exports/${state.exportId}`, { key });
      return found.body.status === 'completed' ? true : undefined;
    }, 90_000);

    const total = 2 * FILES_PER_TRANSFER + 1;
    t.deepEqual(await wrappedByKey(), { 'rot-old': total });
    const status = await keysCommand([OLD], 'status');
    t.is(status.code, 0, status.output);
    t.like(status.json, { current_key_id: 'rot-old', by_key: { 'rot-old': total } });
    t.like(status.json.by_place, {
      'transfer_files.data_key_wrapped': { 'rot-old': 2 * FILES_PER_TRANSFER },
      'gdpr_exports.data_key_wrapped': { 'rot-old': 1 },
    });
    const refused = await keysCommand([OLD, NEW], 'retire', 'rot-old');
    t.is(refused.code, 2, refused.output);
    t.like(refused.json, { retirable: false, reason: 'in_use', remaining: total });
    await everythingDownloads(t, api, 'under the old key');
  },
);

test.serial(
  'the rotation re-wraps everything under the new key, survives its worker killed mid-batch, and files download throughout',
  async (t) => {
    const keys = [OLD, NEW];
    const api = await restart(keys);
    await everythingDownloads(t, api, 'after the restart, before the rotation');
    const db = state.db as pg.Client;
    // Hold the fifth transfer file's row: the rotation's third batch (of two) waits on it, with four
    // values re-wrapped and committed, until the worker running it is killed.
    const ids = await db.query<{ id: string }>('SELECT id::text AS id FROM transfer_files ORDER BY id');
    const held = ids.rows[4]?.id;
    const blocker = new pg.Client({ connectionString: databaseUrl.href });
    await blocker.connect();
    t.teardown(() => blocker.end());
    await blocker.query('BEGIN');
    await blocker.query('SELECT id FROM transfer_files WHERE id = $1 FOR NO KEY UPDATE', [held]);

    const rotate = await keysCommand(keys, 'rotate', '--batch-size', '2');
    t.is(rotate.code, 0, rotate.output);
    t.like(rotate.json, { workflow_id: 'rewrap-data-keys-rot-new', target_key_id: 'rot-new' });
    await eventually(async () => ((await wrappedByKey())['rot-new'] === 4 ? true : undefined), 90_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    t.like(await wrappedByKey(), { 'rot-old': 9, 'rot-new': 4 }, 'the rotation waits on the held row');
    await everythingDownloads(t, api, 'during the rotation (values under both keys)');
    const status = await keysCommand(keys, 'status');
    t.like(status.json, {
      by_key: { 'rot-old': 9, 'rot-new': 4 },
      rotation: {
        workflow_id: 'rewrap-data-keys-rot-new',
        status: 'RUNNING',
        progress: { place: 'transfer_files.data_key_wrapped', rewrapped: 4, batches: 2, phase: 'rewrapping' },
      },
    });

    await kill(state.worker as ChildProcess);
    await blocker.query('ROLLBACK');
    state.worker = startWorker(envWith(keys));
    // Starting it again finds the one that runs, and waits for it.
    const finished = await keysCommand(keys, 'rotate', '--wait');
    t.is(finished.code, 0, finished.output);
    t.like(finished.json, { workflow_id: 'rewrap-data-keys-rot-new', phase: 'completed', failed: 0 });
    t.is(finished.json.rewrapped, 13, 'each value counted once, the killed batch included');
    t.deepEqual(await wrappedByKey(), { 'rot-new': 13 });

    // The kill landed mid-batch: a batch needed a second attempt.
    const temporal = await connectTemporal(api.services.config);
    t.teardown(() => temporal.connection.close());
    const history = await temporal.workflow.getHandle('rewrap-data-keys-rot-new').fetchHistory();
    const attempts = (history.events ?? []).map((event) => event.activityTaskStartedEventAttributes?.attempt ?? 0);
    t.true(Math.max(...attempts) >= 2, `a batch was retried after the kill (attempts: ${attempts.join(',')})`);

    await everythingDownloads(t, api, 'after the rotation');
    const retired = await keysCommand(keys, 'retire', 'rot-old');
    t.is(retired.code, 0, retired.output);
    t.like(retired.json, { key_id: 'rot-old', retirable: true });
    const current = await keysCommand(keys, 'retire', 'rot-new');
    t.is(current.code, 2);
    t.like(current.json, { retirable: false, reason: 'current' });
  },
);

test.serial(
  'with the old key gone from the keyring, everything still downloads, and new files are stored under the new key',
  async (t) => {
    const api = await restart([NEW]);
    await everythingDownloads(t, api, 'without the old key');
    const data = content(100_000);
    const created = await createTransfer(api, state.ws?.keys.live ?? '', {
      files: [{ name: 'new.bin', size: data.length }],
    });
    t.is((await put(created.upload_urls[0]?.url ?? '', data)).status, 200);
    await waitForTransfer(api, state.ws?.keys.live ?? '', created.transfer.id, (tr) => tr.status === 'active', 90_000);
    state.transfers.push({
      shortCode: created.transfer.short_code,
      files: new Map([[created.upload_urls[0]?.file_id ?? '', data]]),
    });
    t.deepEqual(await wrappedByKey(), { 'rot-new': 14 });
    await everythingDownloads(t, api, 'a new file');
  },
);
