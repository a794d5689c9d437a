import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import test from 'ava';
import { activitiesByFamily } from '../../activities/index.ts';
import type { FileActivities, FilePlan, OwnerExpiryActivities } from '../../activities/lifecycles.ts';
import { loadConfig } from '../../lib/config.ts';
import { fileLifecycle, storedFilesDeletedSignal, storedFileUploadedSignal } from '../../workflows/fileLifecycle.ts';
import { LIFECYCLE_FAMILIES, type LifecycleFamily } from '../../workflows/ids.ts';
import { bundleWorkflows, untilCalled, withWorker } from '../helpers/workflows.ts';

// The generic per-file workflow against the real Temporal dev server, with stub activities named
// as a family's are (`<family>.<step>`): what it does, in order, whichever family it runs for.

let bundle: WorkflowBundle;
test.before(async () => {
  bundle = await bundleWorkflows();
});

const soon = (ms: number) => new Date(Date.now() + ms).toISOString();

const STEPS = [
  'plan',
  'uploadedFileIds',
  'receive',
  'notifyReceived',
  'beginScan',
  'scanFile',
  'settleScan',
  'rejectUnverified',
  'destroy',
  'purge',
] as const satisfies readonly (keyof FileActivities)[];

/** A family's file steps recording `step:id`; `answers` replace the defaults (a clean, two-file owner). */
function stubs(
  family: LifecycleFamily,
  calls: string[],
  plan: Partial<FilePlan>,
  answers: Partial<FileActivities> = {},
) {
  const defaults: FileActivities = {
    plan: async () => ({
      ended: false,
      fileIds: ['f1', 'f2'],
      uploadedFileIds: [],
      uploadDeadline: soon(60_000),
      uploadRecheckMs: 3_600_000,
      scanned: true,
      ...plan,
    }),
    uploadedFileIds: async () => [],
    receive: async () => ({ kept: true, retentionUntil: soon(1_000) }),
    notifyReceived: async () => undefined,
    beginScan: async () => undefined,
    scanFile: async () => 'clean',
    settleScan: async () => 'available',
    rejectUnverified: async () => undefined,
    destroy: async () => undefined,
    purge: async () => undefined,
  };
  const steps = { ...defaults, ...answers } as Record<string, (id: string) => Promise<unknown>>;
  return Object.fromEntries(
    STEPS.map((step) => [
      `${family}.${step}`,
      async (id: string) => {
        calls.push(`${step}:${id}`);
        return steps[step]?.(id);
      },
    ]),
  );
}

const run = (client: Client, taskQueue: string, family: LifecycleFamily, ownerId: string) =>
  client.workflow.start(fileLifecycle, {
    taskQueue,
    workflowId: `test-file-lifecycle-${randomUUID()}`,
    args: [{ family, ownerId }],
    workflowExecutionTimeout: '2 minutes',
  });

test('files are received once every one is in, scanned one by one, and destroyed when retention ends', async (t) => {
  const calls: string[] = [];
  await withWorker(bundle, stubs('intakes', calls, {}), async (client, taskQueue) => {
    const handle = await run(client, taskQueue, 'intakes', 'doc_1');
    await untilCalled(calls, (seen) => seen.includes('plan:doc_1'), 'the first look');
    await handle.signal(storedFileUploadedSignal, 'f1');
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.deepEqual(calls, ['plan:doc_1'], 'nothing happens before the last file is in');
    await handle.signal(storedFileUploadedSignal, 'f2');
    t.is(await handle.result(), 'retention_ended');
  });
  t.deepEqual(calls, [
    'plan:doc_1',
    'receive:doc_1',
    'notifyReceived:doc_1',
    'beginScan:doc_1',
    'scanFile:f1',
    'scanFile:f2',
    'settleScan:doc_1',
    'destroy:doc_1',
    'purge:doc_1',
  ]);
});

test('content that cannot be scanned is never, and a notice that fails does not hold the files back', async (t) => {
  const calls: string[] = [];
  const failingNotice = {
    notifyReceived: async () => {
      // Not retried, so the test does not wait out MAIL_RETRY's backoff.
      throw ApplicationFailure.nonRetryable('mail server down');
    },
  };
  const activities = stubs('intakes', calls, { scanned: false, uploadedFileIds: ['f1', 'f2'] }, failingNotice);
  await withWorker(bundle, activities, async (client, taskQueue) => {
    t.is(await (await run(client, taskQueue, 'intakes', 'doc_2')).result(), 'retention_ended');
  });
  t.deepEqual(calls, ['plan:doc_2', 'receive:doc_2', 'notifyReceived:doc_2', 'destroy:doc_2', 'purge:doc_2']);
});

test('a single-file owner kept until deleted: available after its scan, its blob removed once deleted', async (t) => {
  const calls: string[] = [];
  const itemId = randomUUID();
  const activities = stubs(
    'coffres',
    calls,
    { fileIds: [itemId] },
    { receive: async () => ({ kept: true, retentionUntil: null }) },
  );
  await withWorker(bundle, activities, async (client, taskQueue) => {
    const handle = await run(client, taskQueue, 'coffres', itemId);
    await handle.signal(storedFileUploadedSignal, itemId);
    await untilCalled(calls, (seen) => seen.includes(`settleScan:${itemId}`), 'the scan');
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.false(
      calls.some((call) => call.startsWith('purge')),
      'an available owner keeps its blobs',
    );
    await handle.signal(storedFilesDeletedSignal);
    t.is(await handle.result(), 'deleted');
  });
  t.deepEqual(calls.slice(-2), [`settleScan:${itemId}`, `purge:${itemId}`]);
  t.false(calls.includes(`destroy:${itemId}`), 'deleted by its owner: the keys are gone already');
});

test('a file stored while its signal was lost is found by the re-read, and the owner received', async (t) => {
  // Temporal was unreachable as f2's last byte landed: the API stored it but could not signal.
  const calls: string[] = [];
  const stored = ['f1'];
  const activities = stubs('intakes', calls, { uploadRecheckMs: 400 }, { uploadedFileIds: async () => stored });
  await withWorker(bundle, activities, async (client, taskQueue) => {
    const handle = await run(client, taskQueue, 'intakes', 'doc_7');
    await handle.signal(storedFileUploadedSignal, 'f1');
    await untilCalled(calls, (seen) => seen.includes('uploadedFileIds:doc_7'), 'a re-read');
    t.false(calls.includes('receive:doc_7'), 'not received while f2 is missing');
    stored.push('f2');
    t.is(await handle.result(), 'retention_ended');
  });
  t.is(calls.filter((call) => call === 'receive:doc_7').length, 1);
});

test('at the deadline the stored uploads are read once more: a file stored unsignalled is not taken for missing', async (t) => {
  const calls: string[] = [];
  const plan = { uploadDeadline: soon(800), fileIds: ['item_8'] };
  const activities = stubs('coffres', calls, plan, { uploadedFileIds: async () => ['item_8'] });
  await withWorker(bundle, activities, async (client, taskQueue) => {
    t.is(await (await run(client, taskQueue, 'coffres', 'item_8')).result(), 'retention_ended');
  });
  t.deepEqual(calls.slice(0, 3), ['plan:item_8', 'uploadedFileIds:item_8', 'receive:item_8']);
});

test('files that miss the upload deadline are destroyed; infected ones are rejected and purged', async (t) => {
  const late: string[] = [];
  await withWorker(bundle, stubs('intakes', late, { uploadDeadline: soon(800) }), async (client, taskQueue) => {
    t.is(await (await run(client, taskQueue, 'intakes', 'doc_3')).result(), 'upload_incomplete');
  });
  t.deepEqual(
    late,
    ['plan:doc_3', 'uploadedFileIds:doc_3', 'destroy:doc_3', 'purge:doc_3'],
    'looked once more at the deadline',
  );

  const infected: string[] = [];
  const rejecting = { settleScan: async () => 'rejected' };
  const activities = stubs('coffres', infected, { uploadedFileIds: ['f1', 'f2'] }, rejecting);
  await withWorker(bundle, activities, async (client, taskQueue) => {
    t.is(await (await run(client, taskQueue, 'coffres', 'item_4')).result(), 'rejected');
  });
  t.deepEqual(infected.slice(-2), ['settleScan:item_4', 'purge:item_4']);
  t.false(infected.includes('destroy:item_4'), 'rejected: shredded by settleScan, not destroyed again');
});

test('a file whose scan fails for good rejects its owner, which is purged, never made available', async (t) => {
  const calls: string[] = [];
  const failing = {
    scanFile: async (fileId: string) => {
      if (fileId === 'f1') throw ApplicationFailure.nonRetryable('f1 does not match its upload', 'ChecksumMismatch');
      return 'clean';
    },
  };
  const activities = stubs('intakes', calls, { uploadedFileIds: ['f1', 'f2'] }, failing);
  await withWorker(bundle, activities, async (client, taskQueue) => {
    t.is(await (await run(client, taskQueue, 'intakes', 'doc_5')).result(), 'scan_failed');
  });
  t.deepEqual(calls.slice(-3), ['scanFile:f1', 'rejectUnverified:doc_5', 'purge:doc_5']);
  t.false(calls.includes('settleScan:doc_5'), 'never made available');
  t.false(calls.includes('scanFile:f2'), 'the other files are not scanned for nothing');
});

test('an owner deleted during its scans stops them and is purged', async (t) => {
  const calls: string[] = [];
  let release = () => {};
  const slowFirstScan = {
    scanFile: async (fileId: string) => {
      if (fileId === 'f1') await new Promise<void>((resolve) => (release = resolve));
      return 'clean';
    },
  };
  const activities = stubs('intakes', calls, { uploadedFileIds: ['f1', 'f2'] }, slowFirstScan);
  await withWorker(bundle, activities, async (client, taskQueue) => {
    const handle = await run(client, taskQueue, 'intakes', 'doc_6');
    await untilCalled(calls, (seen) => seen.includes('scanFile:f1'), 'the first scan');
    await handle.signal(storedFilesDeletedSignal);
    release();
    t.is(await handle.result(), 'deleted');
  });
  t.deepEqual(calls.slice(-2), ['scanFile:f1', 'purge:doc_6']);
});

test('every lifecycle family registers each step under the name the workflows call', (t) => {
  const config = loadConfig();
  // Building the factories touches no connection: the activities only hold their clients.
  const byFamily = activitiesByFamily({ config } as Parameters<typeof activitiesByFamily>[0]);
  const expirySteps: (keyof OwnerExpiryActivities)[] = ['loadExpiry', 'expire'];
  for (const family of LIFECYCLE_FAMILIES) {
    const names = Object.keys(byFamily[family]);
    for (const step of [...STEPS, ...expirySteps]) t.true(names.includes(`${family}.${step}`), `${family}.${step}`);
  }
});
