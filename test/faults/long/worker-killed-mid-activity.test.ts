import { randomUUID } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import type { DatabasePool } from 'slonik';
import { createEventQueries } from '../../../lib/db/queries/events.ts';
import { sql } from '../../../lib/db/sql.ts';
import { connectTemporal } from '../../../lib/temporal.ts';
import { gdprExportWorkflowId } from '../../../workflows/gdprExport.ts';
import { intakeDocumentWorkflowId } from '../../../workflows/ids.ts';
import { ruleRunWorkflowId } from '../../../workflows/runRule.ts';
import { eventually, startApi, type TestApi } from '../../helpers/api.ts';
import { kill, startWorker } from '../../helpers/processes.ts';
import { storedUnder } from '../../helpers/storage.ts';
import { content, createTransfer, put, waitForTransfer } from '../../helpers/transfers.ts';
import { activityAttempts, activityStarted, runsOf } from '../../helpers/workflow-runs.ts';

// The worker killed (SIGKILL) in the middle of an activity that writes (issue #26): a rule's
// `extend_expiry` action, a GDPR export, the sandbox purge, an intake document's deletion at the
// end of its retention. To land the kill inside the activity, not
// before or after it, the test holds a lock on the row the activity writes (as a slow database
// would): the activity starts, waits on the lock, and the worker is killed then. Temporal retries the
// activity on a new worker once its start-to-close timeout has passed (a minute for a rule action
// or a document's deletion, five for an export: why these scenarios are `make test-faults` only). Checked: the work is done
// once, neither lost nor doubled.

/** Holds `FOR UPDATE` on one row until released; resolves once the lock is held. */
async function lockRow(db: DatabasePool, table: 'transfers' | 'gdpr_exports' | 'intake_documents', id: string) {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let held: () => void = () => {};
  const holding = new Promise<void>((resolve) => {
    held = resolve;
  });
  const transaction = db.transaction(async (tx) => {
    // Held as long as the test needs: the pool's own bounds would end this transaction first.
    await tx.query(sql.unsafe`SET LOCAL idle_in_transaction_session_timeout = 0`);
    await tx.query(sql.unsafe`SELECT 1 FROM ${sql.identifier([table])} WHERE id = ${id} FOR UPDATE`);
    held();
    await released;
  });
  await holding;
  return async () => {
    release();
    await transaction;
  };
}

async function scenario(t: ExecutionContext, name: string) {
  const taskQueue = `fault-${randomUUID()}`;
  const api = await startApi({ TEMPORAL_TASK_QUEUE: taskQueue });
  t.teardown(() => api.close());
  let worker = startWorker({ TEMPORAL_TASK_QUEUE: taskQueue });
  t.teardown(() => kill(worker));
  const temporal = await connectTemporal(api.services.config);
  t.teardown(() => temporal.connection.close());
  const ws = await api.workspace(name);
  const stopWorker = () => kill(worker);
  const startAgain = () => {
    worker = startWorker({ TEMPORAL_TASK_QUEUE: taskQueue });
  };
  const replaceWorker = async () => {
    await stopWorker();
    startAgain();
  };
  return { api, ws, temporal, replaceWorker, stopWorker, startAgain };
}

async function activeTransfer(api: TestApi, key: string) {
  const bytes = content(1024);
  const created = await createTransfer(api, key, { files: [{ name: 'rule.bin', size: bytes.length }] });
  await put(created.upload_urls[0]?.url ?? '', bytes);
  return waitForTransfer(api, key, created.transfer.id, (tr) => tr.status === 'active');
}

test.serial('a worker killed inside a rule action (extend_expiry): the transfer is extended once', async (t) => {
  const { api, ws, temporal, replaceWorker, stopWorker, startAgain } = await scenario(t, 'Rule action killed');
  const key = ws.keys.live;
  const transfer = await activeTransfer(api, key);
  const rule = await api.call('POST', '/v1/rules', {
    key,
    body: {
      name: 'extend on download',
      trigger_event: 'transfer.downloaded',
      action_type: 'extend_expiry',
      action_config: { hours: 24 },
    },
  });
  t.is(rule.status, 201, rule.text);
  // A download triggers the rule, whose run waits for a worker while the transfer's row is locked
  // (the download itself writes that row: it comes first).
  await stopWorker();
  const issued = await api.call('POST', `/v1/shares/${transfer.short_code}/download-links`, { body: {} });
  await fetch(issued.body.files[0].download_url).then((response) => response.arrayBuffer());
  const unlock = await lockRow(api.services.db, 'transfers', transfer.id);
  startAgain();
  const event = await eventually(
    async () =>
      (
        await createEventQueries(api.services.db).listByType(
          { workspaceId: ws.workspace_id, environment: 'live' },
          'transfer.downloaded',
        )
      )[0],
  );
  const workflowId = ruleRunWorkflowId(rule.body.id, event.id);
  await activityStarted(temporal, workflowId, ['performRuleAction']);
  await replaceWorker();
  t.log(`injected: the worker killed (SIGKILL) inside performRuleAction of ${workflowId}, for event ${event.id}`);
  await unlock();

  const tenant = { workspaceId: ws.workspace_id, environment: 'live' as const };
  const extended = await eventually(async () => {
    const rows = await createEventQueries(api.services.db).listByType(tenant, 'transfer.expiry_extended');
    return rows.length > 0 ? rows : undefined;
  }, 180_000);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  t.is((await createEventQueries(api.services.db).listByType(tenant, 'transfer.expiry_extended')).length, 1);
  t.is(extended.length, 1);
  const after = await api.call('GET', `/v1/transfers/${transfer.id}`, { key });
  t.is(
    new Date(after.body.expires_at).getTime() - new Date(transfer.expires_at).getTime(),
    24 * 3_600_000,
    'extended once',
  );
  t.log('checked: one transfer.expiry_extended, expires_at moved by 24 h exactly');
});

test.serial('a worker killed inside a GDPR export: the export completes once, whole', async (t) => {
  const { api, ws, temporal, replaceWorker, stopWorker, startAgain } = await scenario(t, 'GDPR export killed');
  const key = ws.keys.live;
  await activeTransfer(api, key);
  // Asked for with no worker to run it, so that its row is locked before the collection starts.
  await stopWorker();
  const requested = await api.call('POST', '/v1/gdpr/exports', { key, body: { user_id: ws.user_id } });
  t.is(requested.status, 202, requested.text);
  const exportId: string = requested.body.id;
  const unlock = await lockRow(api.services.db, 'gdpr_exports', exportId);
  startAgain();
  const workflowId = gdprExportWorkflowId(exportId);
  // Its first activity marks the row running, and the collection writes its progress there.
  const inside = await activityStarted(temporal, workflowId, ['beginGdprExport', 'collectGdprExportFamily']);
  await replaceWorker();
  t.log(`injected: the worker killed (SIGKILL) inside ${inside} of ${workflowId}`);
  await unlock();

  const done = await eventually(async () => {
    const current = await api.call('GET', `/v1/gdpr/exports/${exportId}`, { key });
    return current.body.status === 'completed' ? current.body : undefined;
  }, 420_000);
  t.truthy(done.download_url, JSON.stringify(done));
  const tenant = { workspaceId: ws.workspace_id, environment: 'live' as const };
  const completed = await createEventQueries(api.services.db).listByType(tenant, 'workspace.export_completed');
  t.is(completed.filter((row) => (row.data.export as { id: string }).id === exportId).length, 1, 'completed once');
  t.log('checked: the export completed once after the kill');
});

test.serial('a worker killed inside the sandbox purge: the sandbox is purged whole, live untouched', async (t) => {
  const { api, ws, temporal, replaceWorker } = await scenario(t, 'Sandbox purge killed');
  const bytes = content(2048);
  const made: Record<'live' | 'sandbox', string[]> = { live: [], sandbox: [] };
  for (const environment of ['live', 'sandbox'] as const) {
    for (let i = 0; i < 3; i++) {
      const created = await createTransfer(api, ws.keys[environment], {
        files: [{ name: `p${i}.bin`, size: bytes.length }],
      });
      await put(created.upload_urls[0]?.url ?? '', bytes);
      await waitForTransfer(api, ws.keys[environment], created.transfer.id, (tr) => tr.status === 'active');
      made[environment].push(created.transfer.id);
    }
  }
  // The purge of everything older than now waits on one of the sandbox's transfers, locked.
  const unlock = await lockRow(api.services.db, 'transfers', made.sandbox[1] ?? '');
  const workflowId = `fault-purge-${randomUUID()}`;
  const run = await temporal.workflow.start('purgeSandbox', {
    taskQueue: api.services.config.temporal.taskQueue,
    workflowId,
    args: [{ maxAgeHours: 0 }],
  });
  await activityStarted(temporal, workflowId, ['purgeEnvironment']);
  await replaceWorker();
  t.log(`injected: the worker killed (SIGKILL) inside purgeEnvironment of ${workflowId}`);
  await unlock();

  const result = (await run.result()) as { rows: number; objects: number };
  t.true(result.rows > 0 && result.objects > 0, JSON.stringify(result));
  const count = async (environment: 'live' | 'sandbox') =>
    Number(
      await api.services.db.oneFirst(
        sql.unsafe`SELECT count(*)::int FROM transfers WHERE workspace_id = ${ws.workspace_id} AND environment = ${environment}`,
      ),
    );
  t.is(await count('sandbox'), 0, 'every sandbox transfer purged');
  t.is(await count('live'), made.live.length, 'live untouched');
  for (const id of made.live) t.is((await api.call('GET', `/v1/transfers/${id}`, { key: ws.keys.live })).status, 200);
  t.log(`checked: the purge completed after the kill (${result.rows} rows, ${result.objects} objects); live intact`);
});

test.serial(
  "a worker killed inside an intake document's deletion at the end of its retention: deleted once, whole",
  async (t) => {
    const { api, ws, temporal, replaceWorker } = await scenario(t, 'Intake retention killed');
    const key = ws.keys.live;
    // Server mode (scanned), kept 30 seconds once received.
    const intake = await api.call('POST', '/v1/intakes', {
      key,
      body: { title: 'Retention', retention_hours: 30 / 3600 },
    });
    t.is(intake.status, 201, intake.text);
    const intakeId: string = intake.body.id;
    const bytes = content(64 * 1024);
    const submitted = await api.call('POST', `/v1/intakes/${intakeId}/submissions`, {
      key: intake.body.publishable_key.key,
      body: { files: [{ name: 'passport.pdf', size: bytes.length, mime_type: 'application/pdf' }] },
    });
    t.is(submitted.status, 201, submitted.text);
    const documentId: string = submitted.body.document.id;
    t.is((await put(submitted.body.upload_urls[0].url, bytes)).status, 200);
    const documentPath = `/v1/intakes/${intakeId}/documents/${documentId}`;
    const available = await eventually(async () => {
      const document = await api.call('GET', documentPath, { key });
      return document.body.status === 'available' ? document.body : undefined;
    }, 60_000);
    t.truthy(available.retention_until);
    const prefix = `live/${ws.workspace_id}/intakes/${intakeId}/${documentId}/`;
    t.is((await storedUnder(api, prefix)).objects.length, 1);
    const audited = () =>
      api.services.db.oneFirst(sql.unsafe`SELECT count(*)::int FROM audit_log WHERE workspace_id = ${ws.workspace_id}`);
    const auditedBefore = await audited();

    // The deletion at the end of retention writes the document's row: locked, it waits there.
    const unlock = await lockRow(api.services.db, 'intake_documents', documentId);
    const workflowId = intakeDocumentWorkflowId(documentId);
    await activityStarted(temporal, workflowId, ['intakes.destroy'], 90_000);
    await replaceWorker();
    t.log(`injected: the worker killed (SIGKILL) inside intakes.destroy of ${workflowId}, as retention ended`);
    await unlock();

    // The killed worker's statement may still commit once the lock is gone (PostgreSQL notices its
    // client left only then): whatever it did, a document is never deleted with its files' keys kept.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const halfway = (await api.services.db.one(sql.unsafe`
    SELECT d.status, d.wrapped_symmetric_key IS NULL AS content_key_gone,
      bool_and(f.data_key_wrapped IS NULL) AS file_keys_gone
    FROM intake_documents d JOIN intake_files f ON f.document_id = d.id
    WHERE d.id = ${documentId} GROUP BY d.id`)) as { status: string; file_keys_gone: boolean };
    if (halfway.status === 'deleted')
      t.true(halfway.file_keys_gone, `deleted with its keys kept: ${JSON.stringify(halfway)}`);
    t.log(
      halfway.status === 'deleted'
        ? "the killed worker's statement committed once the lock was gone: the document deleted with its keys"
        : "the killed worker's statement did not commit: the document waits for the retry",
    );

    const result = await temporal.workflow.getHandle(workflowId).result();
    t.is(result, 'retention_ended');
    const attempts = await activityAttempts(temporal, workflowId, 'intakes.destroy');
    t.is(attempts.length, 1, 'one deletion, finished');
    t.true((attempts[0] ?? 0) >= 2, `the deletion was retried after the kill (attempt ${attempts[0]})`);
    t.deepEqual(
      (await runsOf(temporal, workflowId)).map((run) => run.status),
      ['COMPLETED'],
    );

    const gone = await api.call('GET', documentPath, { key });
    t.is(gone.status, 410, gone.text);
    const row = await api.services.db.one(sql.unsafe`
    SELECT d.status, d.deleted_at IS NOT NULL AS deleted_at, d.wrapped_symmetric_key IS NULL AS content_key_gone,
      bool_and(f.data_key_wrapped IS NULL) AS file_keys_gone, count(f.*)::int AS files
    FROM intake_documents d JOIN intake_files f ON f.document_id = d.id
    WHERE d.id = ${documentId} GROUP BY d.id`);
    t.deepEqual(row, { status: 'deleted', deleted_at: true, content_key_gone: true, file_keys_gone: true, files: 1 });
    t.deepEqual(await storedUnder(api, prefix), { objects: [], uploads: [] }, 'its blob removed from MinIO');
    const tenant = { workspaceId: ws.workspace_id, environment: 'live' as const };
    for (const type of ['request.submitted', 'request.submission_received']) {
      const recorded = (await createEventQueries(api.services.db).listByType(tenant, type)).filter(
        (event) => (event.data.submission as { id: string }).id === documentId,
      );
      t.is(recorded.length, 1, `${type} once`);
    }
    t.is(await audited(), auditedBefore, 'no audit entry added by the deletion or its retry');
    t.log(
      `checked: retention_ended after deletion attempt ${attempts[0]}; one completed run; 410; deleted, its keys gone; its object gone; request.submitted and request.submission_received once; the audit log unchanged`,
    );
  },
);
