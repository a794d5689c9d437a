import { randomUUID } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { z } from 'zod';
import { itemUuidOf } from '../lib/coffres/ids.ts';
import { sql } from '../lib/db/sql.ts';
import { connectTemporal } from '../lib/temporal.ts';
import { coffreItemWorkflowId, intakeDocumentWorkflowId } from '../workflows/ids.ts';
import { transferWorkflowId } from '../workflows/transferLifecycle.ts';
import { type ApiResponse, eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { kill, startWorker } from './helpers/processes.ts';
import { content, createTransfer, put, waitForTransfer } from './helpers/transfers.ts';

// Revoking a transfer, or deleting an intake document or a vault item, tells its workflow by one
// signal, which then deletes the objects. With that signal lost (here: dropped by the API's
// lifecycle seam; in production, an API process dying after its commit) the objects must still go,
// within two sweep intervals (OBJECT_SWEEP_INTERVAL, lib/storage/sweeper.ts), while the workflow
// still sleeps. The API and a worker with a 2 s interval run on a task queue of their own.

const INTERVAL_MS = 2_000;
// Two intervals, plus room for a busy machine.
const BOUND_MS = 2 * INTERVAL_MS + 8_000;

let api: TestApi;
let ws: TestWorkspace;
let worker: ReturnType<typeof startWorker>;
const taskQueue = `leftovers-${randomUUID()}`;

test.before(async () => {
  api = await startApi({ TEMPORAL_TASK_QUEUE: taskQueue });
  worker = startWorker({ TEMPORAL_TASK_QUEUE: taskQueue, OBJECT_SWEEP_INTERVAL: `${INTERVAL_MS / 1000}s` });
  ws = await api.workspace('Leftovers');
});
test.after.always(async () => {
  await kill(worker);
  await api?.close();
});

async function ok(response: Promise<ApiResponse>, status: number): Promise<ApiResponse> {
  const answer = await response;
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status}: ${answer.text}`);
  return answer;
}

/** The object keys a resource's files are stored under. */
async function objectKeys(table: 'transfer_files' | 'intake_files' | 'coffre_items', column: string, id: string) {
  return api.services.db.anyFirst(sql.type(z.object({ object_key: z.string() }))`
    SELECT object_key FROM ${sql.identifier([table])} WHERE ${sql.identifier([column])} = ${id}`);
}

const present = async (keys: readonly string[]) =>
  (await Promise.all(keys.map((key) => api.services.objects.size(key)))).filter((size) => size !== null).length;

/**
 * Ends a resource with `end` (its signal dropped), then checks: the objects are still there at
 * once (nobody was told), its workflow still runs, and they are gone within the bound.
 */
async function endWithSignalLost(
  t: ExecutionContext,
  owners: 'transfers' | 'intake_documents' | 'coffre_items',
  ownerId: string,
  keys: readonly string[],
  workflowId: string,
  end: () => Promise<unknown>,
) {
  t.true(keys.length > 0 && (await present(keys)) === keys.length, 'stored before');
  const endedAt = Date.now();
  await end();
  t.is(await present(keys), keys.length, 'the signal was lost: nothing deleted the objects at once');
  const gone = await eventually(async () => ((await present(keys)) === 0 ? Date.now() : undefined), 60_000, 100);
  t.log(`objects gone ${gone - endedAt} ms after the end (bound ${BOUND_MS} ms)`);
  t.true(gone - endedAt <= BOUND_MS, `gone after ${gone - endedAt} ms`);
  const temporal = await connectTemporal(api.services.config);
  try {
    const handle = temporal.workflow.getHandle(workflowId);
    t.is((await handle.describe()).status.name, 'RUNNING', 'its workflow never heard of the end');
    await handle.terminate('test over');
  } finally {
    await temporal.connection.close();
  }
  // Marked: the next sweeps leave it alone.
  const marked = await api.services.db.oneFirst(sql.type(z.object({ marked: z.boolean() }))`
    SELECT objects_deleted_at IS NOT NULL AS marked FROM ${sql.identifier([owners])} WHERE id = ${ownerId}`);
  t.true(marked, 'objects_deleted_at is set');
}

test.serial('a revoked transfer whose signal is lost has its objects deleted within two sweep intervals', async (t) => {
  const data = content(64 * 1024);
  const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'kept.bin', size: data.length }] });
  const id = created.transfer.id;
  t.is((await put(created.upload_urls[0]?.url ?? '', data)).status, 200);
  await waitForTransfer(api, ws.keys.live, id, (tr) => tr.status === 'active', 60_000);
  const keys = await objectKeys('transfer_files', 'transfer_id', id);
  const lifecycle = api.services.workflows.transfers;
  const signal = lifecycle.revoked;
  lifecycle.revoked = async () => {};
  t.teardown(() => {
    lifecycle.revoked = signal;
  });
  await endWithSignalLost(t, 'transfers', id, keys, transferWorkflowId(id), () =>
    ok(api.call('DELETE', `/v1/transfers/${id}`, { key: ws.keys.live }), 200),
  );
  const ended = await ok(api.call('GET', `/v1/transfers/${id}`, { key: ws.keys.live }), 200);
  t.like(ended.body, { status: 'deleted', status_reason: 'revoked' });
});

test.serial(
  'a deleted intake document whose signal is lost has its objects deleted within two sweep intervals',
  async (t) => {
    const key = ws.keys.live;
    const intake = await ok(api.call('POST', '/v1/intakes', { key, body: { title: 'Leftovers intake' } }), 201);
    const bytes = content(4096);
    const started = await ok(
      api.call('POST', `/v1/intakes/${intake.body.id}/submissions`, {
        key: intake.body.publishable_key.key,
        body: { files: [{ name: 'doc.pdf', size: bytes.length }] },
      }),
      201,
    );
    t.is((await put(started.body.upload_urls[0].url, bytes)).status, 200);
    const docId: string = started.body.document.id;
    const path = `/v1/intakes/${intake.body.id}/documents/${docId}`;
    await eventually(async () => {
      const got = await api.call('GET', path, { key });
      return got.body.status === 'available' ? true : undefined;
    }, 60_000);
    const keys = await objectKeys('intake_files', 'document_id', docId);
    const lifecycle = api.services.workflows.intakes;
    const signal = lifecycle.documentDeleted;
    lifecycle.documentDeleted = async () => {};
    t.teardown(() => {
      lifecycle.documentDeleted = signal;
    });
    await endWithSignalLost(t, 'intake_documents', docId, keys, intakeDocumentWorkflowId(docId), () =>
      ok(api.call('DELETE', path, { key }), 200),
    );
  },
);

test.serial(
  'a deleted vault item whose signal is lost has its object deleted within two sweep intervals',
  async (t) => {
    const key = ws.keys.live;
    const coffre = await ok(api.call('POST', '/v1/coffres', { key, body: { name: 'Leftovers room' } }), 201);
    const bytes = content(4096);
    const item = await ok(
      api.call('POST', `/v1/coffres/${coffre.body.id}/items`, { key, body: { name: 'kept.bin', size: bytes.length } }),
      201,
    );
    t.is((await put(item.body.upload_url.url, bytes)).status, 200);
    const itemId: string = item.body.item.id;
    const path = `/v1/coffres/${coffre.body.id}/items/${itemId}`;
    await eventually(async () => {
      const got = await api.call('GET', path, { key });
      return got.body.status === 'available' ? true : undefined;
    }, 60_000);
    const keys = await objectKeys('coffre_items', 'id', itemUuidOf(itemId) ?? '');
    const lifecycle = api.services.workflows.coffres;
    const signal = lifecycle.itemDeleted;
    lifecycle.itemDeleted = async () => {};
    t.teardown(() => {
      lifecycle.itemDeleted = signal;
    });
    await endWithSignalLost(
      t,
      'coffre_items',
      itemUuidOf(itemId) ?? '',
      keys,
      coffreItemWorkflowId(itemUuidOf(itemId) ?? ''),
      () => ok(api.call('DELETE', path, { key }), 200),
    );
  },
);

test.serial(
  'a transfer whose workflow is gone still expires: ended within two sweep intervals of its expiry',
  async (t) => {
    const data = content(64 * 1024);
    const created = await createTransfer(api, ws.keys.live, { files: [{ name: 'orphan.bin', size: data.length }] });
    const id = created.transfer.id;
    t.is((await put(created.upload_urls[0]?.url ?? '', data)).status, 200);
    await waitForTransfer(api, ws.keys.live, id, (tr) => tr.status === 'active', 60_000);
    const keys = await objectKeys('transfer_files', 'transfer_id', id);
    // Its workflow dies (a bug, an operator's terminate): nothing is left to wake it at expiry.
    const temporal = await connectTemporal(api.services.config);
    try {
      await temporal.workflow.getHandle(transferWorkflowId(id)).terminate('the test kills it');
    } finally {
      await temporal.connection.close();
    }
    const expiredAt = Date.now();
    await api.services.db.query(sql.typeAlias('void')`
    UPDATE transfers SET expires_at = ${sql.timestamp(new Date(expiredAt))} WHERE id = ${id}`);

    const ended = await eventually(async () => {
      const got = await ok(api.call('GET', `/v1/transfers/${id}`, { key: ws.keys.live }), 200);
      return got.body.status === 'active' ? undefined : got;
    }, 60_000);
    t.log(`ended ${Date.now() - expiredAt} ms after its expiry (bound ${BOUND_MS} ms)`);
    t.true(Date.now() - expiredAt <= BOUND_MS);
    t.like(ended.body, { status: 'expired', status_reason: 'expired' });
    // The expiry commits the status (and destroys the keys) first, then deletes the objects: a read
    // in between sees `expired` with the objects still there for a moment.
    const gone = await eventually(async () => ((await present(keys)) === 0 ? Date.now() : undefined), 10_000, 100);
    t.true(gone - expiredAt <= BOUND_MS, `its objects are gone ${gone - expiredAt} ms after its expiry`);
    const recorded = await api.services.db.anyFirst(sql.type(z.object({ type: z.string() }))`
    SELECT type FROM events WHERE workspace_id = ${ws.workspace_id} AND (data -> 'transfer' ->> 'id') = ${id}`);
    t.is(recorded.filter((type) => type === 'transfer.expired').length, 1, 'one transfer.expired event');
    const view = await api.call('GET', `/v1/shares/${created.transfer.short_code}`);
    t.is(view.status, 410, 'its link is spent');
  },
);
