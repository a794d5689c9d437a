import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { WorkflowFailedError } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import test from 'ava';
import type { createMasterKeyActivities } from '../../activities/master-keys.ts';
import type { RewrapBatchResult } from '../../lib/master-keys/rotation.ts';
import { rewrapDataKeys, rewrapProgressQuery } from '../../workflows/rewrapDataKeys.ts';
import { bundleWorkflows, withWorker } from '../helpers/workflows.ts';

// rewrapDataKeys against the real Temporal dev server, with stub activities over rows in memory:
// the columns it walks, the cursor it hands from batch to batch, continuing as new, its progress
// query, retries. What a batch does to the database is test/faults/master-key-rotation.test.ts's.

type Activities = ReturnType<typeof createMasterKeyActivities>;

let bundle: WorkflowBundle;
test.before(async () => {
  bundle = await bundleWorkflows();
});

/** Rows by column, each `id` -> the master key it is under; batches re-wrap them under the target in memory. */
function stubs(
  rows: Record<string, Record<string, string>>,
  calls: string[],
  hooks: { beforeBatch?: () => Promise<void> } = {},
) {
  return {
    listKeyWrappedPlaces: async () => Object.keys(rows),
    rewrapKeyBatch: async (place: string, target: string, after: string | null, limit: number) => {
      await hooks.beforeBatch?.();
      calls.push(`${place}>${after ?? ''}`);
      const column = rows[place] ?? {};
      const page = Object.keys(column)
        .sort()
        .filter((id) => (after === null || id > after) && column[id] !== target)
        .slice(0, limit);
      let failed = 0;
      const failures: string[] = [];
      for (const id of page) {
        if (column[id] === 'lost') {
          failed++;
          failures.push(`${place}:${id} (unknown-key)`);
        } else column[id] = target;
      }
      return {
        rewrapped: page.length - failed,
        failed,
        failures,
        last: page.at(-1) ?? after,
        done: page.length < limit,
      } satisfies RewrapBatchResult;
    },
  } satisfies Activities;
}

const ids = (n: number, prefix: string) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}-${String(i).padStart(3, '0')}`, 'k1']));

test('rewrapDataKeys walks every declared column a batch at a time, continues as new, and counts what it did', async (t) => {
  const rows = {
    'transfer_files.data_key_wrapped': { ...ids(7, 'a'), 'a-100': 'k2' },
    'coffre_items.data_key_wrapped': {},
    'gdpr_exports.data_key_wrapped': { ...ids(3, 'g'), 'g-999': 'lost' },
  };
  const calls: string[] = [];
  await withWorker(bundle, stubs(rows, calls), async (client, taskQueue) => {
    const result = await client.workflow.execute(rewrapDataKeys, {
      taskQueue,
      workflowId: `test-rewrap-${randomUUID()}`,
      args: [{ targetKeyId: 'k2', batchSize: 2, batchesPerRun: 3 }],
    });
    t.is(result.phase, 'completed');
    t.is(result.rewrapped, 10);
    t.is(result.failed, 1);
    t.deepEqual(result.failures, ['gdpr_exports.data_key_wrapped:g-999 (unknown-key)']);
    t.is(result.places, 3);
    t.is(result.placesDone, 3);
    // 4 batches for 7 rows (a-100 is under k2 already), 1 for none, 3 for 4 (the last one finds
    // nothing after a full one): 8 batches, 3 a run.
    t.is(result.batches, 8);
    t.is(result.runs, 3, 'continued as new after every third batch');
  });
  t.true(
    Object.values(rows).every((column) => Object.values(column).every((key) => key === 'k2' || key === 'lost')),
    JSON.stringify(rows),
  );
  // Each batch starts after the last row of the one before, across continued runs too.
  t.deepEqual(calls, [
    'transfer_files.data_key_wrapped>',
    'transfer_files.data_key_wrapped>a-001',
    'transfer_files.data_key_wrapped>a-003',
    'transfer_files.data_key_wrapped>a-005',
    'coffre_items.data_key_wrapped>',
    'gdpr_exports.data_key_wrapped>',
    'gdpr_exports.data_key_wrapped>g-001',
    'gdpr_exports.data_key_wrapped>g-999',
  ]);
});

test('rewrapDataKeys answers its progress while it runs', async (t) => {
  const rows = { 'transfer_files.data_key_wrapped': ids(3, 'a'), 'intake_files.data_key_wrapped': ids(2, 'b') };
  const calls: string[] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const hooks = { beforeBatch: () => (calls.length === 1 ? gate : Promise.resolve()) };
  await withWorker(bundle, stubs(rows, calls, hooks), async (client, taskQueue) => {
    const handle = await client.workflow.start(rewrapDataKeys, {
      taskQueue,
      workflowId: `test-rewrap-progress-${randomUUID()}`,
      args: [{ targetKeyId: 'k2', batchSize: 10 }],
    });
    // The first column is done, the second one's batch waits at the gate.
    for (const deadline = Date.now() + 30_000; ; ) {
      const progress = await handle.query(rewrapProgressQuery);
      if (progress.place === 'intake_files.data_key_wrapped') {
        t.like(progress, { placesDone: 1, places: 2, rewrapped: 3, batches: 1, phase: 'rewrapping' });
        break;
      }
      if (Date.now() > deadline) t.fail(`no progress: ${JSON.stringify(progress)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    release();
    t.like(await handle.result(), { rewrapped: 5, phase: 'completed', place: null });
  });
});

test('rewrapDataKeys retries a batch that failed and loses nothing; a worker with another current key fails it for good', async (t) => {
  const rows = { 'transfer_files.data_key_wrapped': ids(3, 'a') };
  const calls: string[] = [];
  let attempts = 0;
  const flaky = stubs(rows, calls, {
    beforeBatch: async () => {
      if (++attempts < 3) throw ApplicationFailure.retryable('database away', 'Transient');
    },
  });
  await withWorker(bundle, flaky, async (client, taskQueue) => {
    const result = await client.workflow.execute(rewrapDataKeys, {
      taskQueue,
      workflowId: `test-rewrap-retry-${randomUUID()}`,
      args: [{ targetKeyId: 'k2' }],
    });
    t.is(result.rewrapped, 3);
  });
  t.is(attempts, 3);

  const mismatch: Activities = {
    listKeyWrappedPlaces: async () => ['transfer_files.data_key_wrapped'],
    rewrapKeyBatch: async () => {
      throw ApplicationFailure.nonRetryable('current master key is "k1", not "k2"', 'MasterKeyMismatchError');
    },
  };
  await withWorker(bundle, mismatch, async (client, taskQueue) => {
    const failure = await t.throwsAsync(
      client.workflow.execute(rewrapDataKeys, {
        taskQueue,
        workflowId: `test-rewrap-mismatch-${randomUUID()}`,
        args: [{ targetKeyId: 'k2' }],
      }),
      { instanceOf: WorkflowFailedError },
    );
    t.regex(String((failure?.cause?.cause as Error | undefined)?.message), /not "k2"/);
  });
});
