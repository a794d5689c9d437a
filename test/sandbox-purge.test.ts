import { ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { Client } from '@temporalio/client';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import test from 'ava';
import { z } from 'zod';
import { loadConfig } from '../lib/config.ts';
import { type CascadeEdge, createRetentionQueries } from '../lib/db/queries/retention.ts';
import { sql } from '../lib/db/sql.ts';
import { FAMILIES } from '../lib/families.ts';
import type { TableScope } from '../lib/family.ts';
import { connectTemporal } from '../lib/temporal.ts';
import type { Environment } from '../lib/vocabulary.ts';
import { sandboxPurgeScheduleId } from '../workflows/ids.ts';
import type { PurgeSandboxResult } from '../workflows/purgeSandbox.ts';
import { type ApiResponse, eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { uniqueAddress } from './helpers/mail.ts';
import { type Receiver, startReceiver } from './helpers/receiver.ts';
import { content, createTransfer, links, put, waitForTransfer } from './helpers/transfers.ts';

// The spec's "svc_sandbox_: Isolated sandbox, auto-purged after 24 hours", end to end: data in
// every family made through the API in all three environments of one workspace, the sandbox's
// made 25 hours old, the `sandbox-purge` schedule triggered (the worker of this run created it),
// then every declared table read with SQL and the bucket listed: no sandbox row older than 24
// hours is left, nor any of their objects, and live and test are exactly as they were.

let api: TestApi;
let ws: TestWorkspace;
let receiver: Receiver;
let temporal: Client;
let edges: readonly CascadeEdge[];
const config = loadConfig();

test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Purged sandbox');
  receiver = await startReceiver();
  temporal = await connectTemporal(config);
  edges = await createRetentionQueries(api.services.db).cascadeEdges();
});
test.after.always(async () => {
  await temporal?.connection.close();
  await receiver?.close();
  await api?.close();
});

async function ok(response: Promise<ApiResponse>, status: number, what: string) {
  const answer = await response;
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status}: ${answer.text}`);
  return answer.body;
}

/** One of everything a key can make, in its environment, waited for until the workers are done with it. */
async function makeEverything(key: string) {
  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    api.call(method, path, { key, ...(body === undefined ? {} : { body }), ...(headers ? { headers } : {}) });
  const data = content(2_000);

  // The webhook and the rule first, so that the transfer's events reach them.
  const webhook = await ok(
    call('POST', '/v1/webhooks', { url: receiver.url('/purge'), events: ['transfer.created'] }),
    201,
    'webhook',
  );
  await ok(call('POST', `/v1/webhooks/${webhook.id}/test`), 200, 'ping');
  await ok(
    call('POST', '/v1/rules', { name: 'Archive', trigger_event: 'transfer.created', action_type: 'archive_transfer' }),
    201,
    'rule',
  );
  const recipient = await ok(
    call('POST', '/v1/recipients', { email: uniqueAddress('purge'), name: 'Purge' }, { 'idempotency-key': `r-${key}` }),
    201,
    'recipient',
  );
  const created = await createTransfer(api, key, {
    files: [
      { name: 'one.bin', size: data.length },
      { name: 'two.bin', size: data.length },
    ],
    recipients: [recipient.email],
  });
  for (const entry of created.upload_urls) await put(entry.url, data);
  await waitForTransfer(api, key, created.transfer.id, (row) => row.status === 'active');
  // A counted download: the analytics rollups (migration 0036) get rows too.
  await ok(links(api, created.transfer.short_code), 200, 'download');
  const folder = await ok(call('POST', '/v1/folders', { name: 'Folder' }), 201, 'folder');
  await ok(call('PUT', `/v1/transfers/${created.transfer.id}/folder`, { folder_id: folder.id }), 200, 'into folder');
  await ok(call('POST', '/v1/collections', { title: 'Set', transfer_ids: [created.transfer.id] }), 201, 'collection');

  const intake = await ok(call('POST', '/v1/intakes', { title: 'Intake' }), 201, 'intake');
  const submitted = await ok(
    api.call('POST', `/v1/intakes/${intake.id}/submissions`, {
      key: intake.publishable_key.key,
      body: { files: [{ name: 'invoice.pdf', size: data.length }] },
    }),
    201,
    'submission',
  );
  await put(submitted.upload_urls[0].url, data);
  await eventually(async () => {
    const doc = await call('GET', `/v1/intakes/${intake.id}/documents/${submitted.document.id}`);
    return doc.body?.status === 'available' ? true : undefined;
  }, 60_000);

  const coffre = await ok(call('POST', '/v1/coffres', { name: 'Room' }), 201, 'vault');
  await ok(
    call('POST', `/v1/coffres/${coffre.id}/members`, { email: 'insider@purge.test', access: 'view' }),
    201,
    'member',
  );
  const item = await ok(
    call('POST', `/v1/coffres/${coffre.id}/items`, { name: 'plan.bin', size: data.length }),
    201,
    'item',
  );
  await put(item.upload_url.url, data);
  await eventually(async () => {
    const got = await call('GET', `/v1/coffres/${coffre.id}/items/${item.item.id}`);
    return got.body?.status === 'available' ? true : undefined;
  }, 60_000);

  await ok(
    call('POST', '/v1/api-keys', { name: 'Reader', key_type: 'restricted', scopes: ['transfers:read'] }),
    201,
    'api key',
  );
  await ok(call('POST', '/v1/mcp/tokens', { name: 'Agent', scopes: ['transfers:read'] }), 201, 'MCP token');
  // Last, so that it holds everything above: an export, sealed in the bucket.
  const exported = await ok(call('POST', '/v1/gdpr/exports', {}), 202, 'gdpr export');
  await eventually(async () => {
    const got = await call('GET', `/v1/gdpr/exports/${exported.id}`);
    return got.body?.status === 'completed' ? true : undefined;
  }, 90_000);
  // The transfer's events dispatched: its delivery and its rule's run exist.
  await eventually(async () => {
    const list = await call('GET', `/v1/webhooks/${webhook.id}/deliveries`);
    return (list.body?.data?.length ?? 0) >= 2 ? true : undefined;
  }, 60_000);
  return {
    intakeId: intake.id as string,
    publishableKey: intake.publishable_key.key as string,
    coffreId: coffre.id as string,
  };
}

/** The rows of `table` belonging to the tenant, through its parents for a child table. */
function owned(table: string, scope: TableScope, environment: Environment): ReturnType<typeof sql.fragment> {
  if (scope.kind === 'tenant') {
    return sql.fragment`SELECT ctid FROM ${sql.identifier([table])} AS t
      WHERE t.workspace_id = ${ws.workspace_id} AND t.environment = ${environment}`;
  }
  if (scope.kind !== 'child') throw new Error(`${table} is not tenant data`);
  const edge = edges.find((e) => e.table === table && e.parent === scope.parent && e.columns[0] === scope.column);
  if (!edge) throw new Error(`${table}: no cascade to ${scope.parent}`);
  const parentScope = declared.get(scope.parent);
  if (!parentScope) throw new Error(`${scope.parent} undeclared`);
  return sql.fragment`SELECT c.ctid FROM ${sql.identifier([table])} AS c
    JOIN ${sql.identifier([scope.parent])} AS p ON ${sql.identifier(['p', edge.parentColumns[0] ?? 'id'])} = ${sql.identifier(['c', scope.column])}
    WHERE p.ctid IN (${owned(scope.parent, parentScope, environment)})`;
}

const declared = new Map<string, TableScope>(
  FAMILIES.flatMap((family) => Object.entries(family.tables).map(([table, { scope }]) => [table, scope] as const)),
);
/** Whether a table's rows belong to one environment: a tenant table, or a child of one. */
const ofEnvironment = (scope: TableScope | undefined): boolean =>
  scope?.kind === 'tenant' || (scope?.kind === 'child' && ofEnvironment(declared.get(scope.parent)));
const tenantData = [...declared].filter(([, scope]) => ofEnvironment(scope));

/** Each tenant and child table's row count for the workspace's `environment`. */
async function counts(environment: Environment): Promise<Record<string, number>> {
  const result: Record<string, number> = {};
  for (const [table, scope] of tenantData) {
    result[table] = await api.services.db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
      SELECT count(*) AS count FROM (${owned(table, scope, environment)}) AS rows`);
  }
  return result;
}

/** The workspace's objects and open multipart uploads in `environment`. */
async function stored(environment: Environment): Promise<string[]> {
  const { client, bucket } = api.services.objects;
  const Prefix = `${environment}/${ws.workspace_id}/`;
  const objects = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix }));
  const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix }));
  return [
    ...(objects.Contents ?? []).map((o) => o.Key ?? ''),
    ...(uploads.Uploads ?? []).map((u) => `upload:${u.Key}`),
  ].sort();
}

/** Rows of tenant tables in the sandbox older than `cutoff`, by table (none expected). */
async function olderThan(cutoff: Date): Promise<Record<string, number>> {
  const left: Record<string, number> = {};
  for (const family of FAMILIES) {
    for (const [table, { scope, age }] of Object.entries(family.tables)) {
      // A table of state rather than dated rows (an audit chain's head) stays with its tenant.
      if (scope.kind !== 'tenant' || age === null) continue;
      const n = await api.services.db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
        SELECT count(*) AS count FROM ${sql.identifier([table])}
        WHERE workspace_id = ${ws.workspace_id} AND environment = 'sandbox'
          AND ${sql.identifier([age ?? 'created_at'])} < ${sql.timestamp(cutoff)}`);
      if (n > 0) left[table] = n;
    }
  }
  return left;
}

test.serial(
  'the sandbox-purge schedule removes every sandbox row and object older than 24 hours, and nothing else',
  async (t) => {
    await makeEverything(ws.keys.live);
    await makeEverything(ws.keys.test);
    const sandbox = await makeEverything(ws.keys.sandbox);

    // Every family with tenant data has some in the sandbox; the tables left empty say what the
    // fixtures do not reach (downloads, approvals, password guesses), purged all the same.
    const sandboxBefore = await counts('sandbox');
    // (A table declared to hold other environments only, such as SCIM's live-only tokens, cannot.)
    const emptyTenantTables = tenantData
      .filter(
        ([table, scope]) =>
          scope.kind === 'tenant' &&
          (scope.environments ?? ['sandbox']).includes('sandbox') &&
          sandboxBefore[table] === 0,
      )
      .map(([table]) => table);
    t.deepEqual(emptyTenantTables, [], 'tenant tables the fixtures left empty in the sandbox');
    t.log(`sandbox rows before: ${JSON.stringify(sandboxBefore)}`);
    t.true((await stored('sandbox')).length >= 4, 'the sandbox has objects: two files, a document, an item');

    // The sandbox's data made 25 hours old, by the age column each family declares.
    for (const family of FAMILIES) {
      for (const [table, { scope, age }] of Object.entries(family.tables)) {
        // A table of state rather than dated rows (an audit chain's head) stays with its tenant.
        if (scope.kind !== 'tenant' || age === null) continue;
        const column = sql.identifier([age ?? 'created_at']);
        await api.services.db.query(sql.typeAlias('void')`
        UPDATE ${sql.identifier([table])} SET ${column} = ${column} - interval '25 hours'
        WHERE workspace_id = ${ws.workspace_id} AND environment = 'sandbox'`);
      }
    }
    // A fresh sandbox key and what it makes now must survive.
    const fresh = await ws.mintKey({ name: 'fresh' }, 'sandbox');
    const young = await ok(
      api.call('POST', '/v1/folders', { key: fresh.key, body: { name: 'Young' } }),
      201,
      'young folder',
    );
    const youngData = content(500);
    const youngTransfer = await createTransfer(api, fresh.key, {
      files: [{ name: 'young.bin', size: youngData.length }],
    });
    for (const entry of youngTransfer.upload_urls) await put(entry.url, youngData);
    await waitForTransfer(api, fresh.key, youngTransfer.transfer.id, (row) => row.status === 'active');
    // Young files of old parents: a document submitted now to the day-old intake, an item added now
    // to the day-old vault. They go with their parents, and so must their objects, first.
    const lateDocument = await ok(
      api.call('POST', `/v1/intakes/${sandbox.intakeId}/submissions`, {
        key: sandbox.publishableKey,
        body: { files: [{ name: 'late.pdf', size: youngData.length }] },
      }),
      201,
      'late submission',
    );
    const lateSubmission = await put(lateDocument.upload_urls[0].url, youngData);
    if (lateSubmission.status !== 200) throw new Error(`late document upload: ${lateSubmission.status}`);
    const lateItem = await ok(
      api.call('POST', `/v1/coffres/${sandbox.coffreId}/items`, {
        key: fresh.key,
        body: { name: 'late.bin', size: youngData.length },
      }),
      201,
      'late item',
    );
    const lateUpload = await put(lateItem.upload_url.url, youngData);
    if (lateUpload.status !== 200)
      throw new Error(`late item upload: ${lateUpload.status} ${JSON.stringify(lateUpload.body)}`);

    const liveBefore = await counts('live');
    const testBefore = await counts('test');
    const liveObjects = await stored('live');
    const testObjects = await stored('test');
    t.true(liveObjects.length >= 4 && testObjects.length >= 4);
    const sandboxObjectsBefore = await stored('sandbox');
    t.true(
      sandboxObjectsBefore.some((k) => k.includes(lateDocument.document.id)),
      'the late document is stored',
    );
    t.is(
      sandboxObjectsBefore.filter((k) => k.includes(`/coffres/${sandbox.coffreId}/`)).length,
      2,
      'the late item is stored beside the old one',
    );

    // Triggered as the Temporal UI's "Trigger" does, then awaited through the run it started.
    const schedule = temporal.schedule.getHandle(sandboxPurgeScheduleId(config.temporal.taskQueue));
    const started = async () => {
      const { info } = await schedule.describe();
      return [...info.recentActions.map((taken) => taken.action), ...info.runningActions].map((a) => a.workflow);
    };
    const earlier = new Set((await started()).map((run) => run.workflowId));
    const triggeredAt = Date.now();
    await schedule.trigger(ScheduleOverlapPolicy.ALLOW_ALL);
    const run = await eventually(async () => (await started()).find((w) => !earlier.has(w.workflowId)), 30_000);
    const result: PurgeSandboxResult = await temporal.workflow
      .getHandle(run.workflowId, run.firstExecutionRunId)
      .result();
    t.log(`purge: ${JSON.stringify(result)}`);
    const cutoff = new Date(result.cutoff);
    t.true(cutoff.getTime() <= Date.now() - 24 * 3_600_000 + 1_000 && cutoff.getTime() > triggeredAt - 25 * 3_600_000);

    t.deepEqual(await olderThan(cutoff), {}, 'sandbox rows older than the cutoff');
    const sandboxAfter = await counts('sandbox');
    t.is(sandboxAfter.folders, 1, 'the young folder stays');
    t.is(sandboxAfter.transfers, 1, 'the young transfer stays');
    t.is(sandboxAfter.transfer_files, 1);
    const leftObjects = await stored('sandbox');
    t.deepEqual(
      leftObjects,
      sandboxObjectsBefore.filter((k) => k.includes(youngTransfer.transfer.id)),
      'only the young transfer keeps its object',
    );
    t.is(leftObjects.length, 1);

    t.deepEqual(await counts('live'), liveBefore, 'live rows untouched');
    t.deepEqual(await counts('test'), testBefore, 'test rows untouched');
    t.deepEqual(await stored('live'), liveObjects, 'live objects untouched');
    t.deepEqual(await stored('test'), testObjects, 'test objects untouched');

    // What a sandbox key's holder sees: the purged key no longer authenticates; the fresh one works.
    const purgedKey = await api.call('GET', '/v1/folders', { key: ws.keys.sandbox });
    t.is(purgedKey.status, 401);
    const freshKey = await api.call('GET', '/v1/folders', { key: fresh.key });
    t.is(freshKey.status, 200);
    t.deepEqual(
      freshKey.body.data.map((f: { id: string }) => f.id),
      [young.id],
    );
    // The live and test keys still see their own.
    for (const environment of ['live', 'test'] as const) {
      const folders = await api.call('GET', '/v1/folders', { key: ws.keys[environment] });
      t.is(folders.body.data.length, 1, environment);
    }
    // The sandbox's audit chain lost its old entries and still verifies, from its moved anchor.
    const verified = await api.call('GET', '/v1/audit/verify', { key: fresh.key });
    t.is(verified.status, 200);
    t.like(verified.body, { valid: true, first_broken: null });
    t.true(verified.body.anchor.seq > 0, 'the anchor moved past the purged entries');
  },
);
