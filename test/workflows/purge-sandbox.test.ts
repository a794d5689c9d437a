import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import test from 'ava';
import type { createRetentionActivities } from '../../activities/retention.ts';
import type { PurgeCounts } from '../../lib/retention/purge.ts';
import { purgeSandbox } from '../../workflows/purgeSandbox.ts';
import { bundleWorkflows, withWorker as withBundledWorker } from '../helpers/workflows.ts';

// purgeSandbox against the real Temporal dev server, with stub activities on a task queue of
// their own: the cutoff it computes, the workspaces it visits, its retries. What a purge deletes
// is test/sandbox-purge.test.ts's.

type Activities = ReturnType<typeof createRetentionActivities>;

let bundle: WorkflowBundle;
test.before(async () => {
  bundle = await bundleWorkflows();
});

const withWorker = (activities: Activities, run: (client: Client, taskQueue: string) => Promise<void>) =>
  withBundledWorker(bundle, activities, run);

const HOUR = 3_600_000;
const counts = (rows: number, objects: number): PurgeCounts => ({ rows: { transfers: rows }, objects });

/** Stub activities over `workspaces` (ids in order), recording each purge. */
function stubs(workspaces: string[], purged: Array<{ workspaceId: string; environment: string; cutoff: string }>) {
  return {
    listWorkspacesAfter: async (after: string | null, limit: number) =>
      workspaces.filter((id) => after === null || id > after).slice(0, limit),
    purgeEnvironment: async (workspaceId: string, environment: 'live' | 'test' | 'sandbox', cutoff: string) => {
      purged.push({ workspaceId, environment, cutoff });
      return counts(2, 1);
    },
  } satisfies Activities;
}

test('purgeSandbox purges the sandbox of every workspace, as of 24 hours before asOf', async (t) => {
  const workspaces = Array.from({ length: 150 }, (_, i) => `ws-${String(i).padStart(3, '0')}`);
  const purged: Array<{ workspaceId: string; environment: string; cutoff: string }> = [];
  await withWorker(stubs(workspaces, purged), async (client, taskQueue) => {
    const asOf = '2030-01-02T12:00:00.000Z';
    const result = await client.workflow.execute(purgeSandbox, {
      taskQueue,
      workflowId: `test-purge-${randomUUID()}`,
      args: [{ asOf }],
    });
    t.is(result.cutoff, new Date(Date.parse(asOf) - 24 * HOUR).toISOString());
    t.is(result.workspaces, 150);
    t.is(result.rows, 300);
    t.is(result.objects, 150);
  });
  t.deepEqual(purged.map((p) => p.workspaceId).sort(), workspaces);
  t.true(purged.every((p) => p.environment === 'sandbox'));
  t.true(purged.every((p) => p.cutoff === '2030-01-01T12:00:00.000Z'));
});

test('purgeSandbox without asOf counts back from its own start time, by maxAgeHours when given', async (t) => {
  const purged: Array<{ workspaceId: string; environment: string; cutoff: string }> = [];
  await withWorker(stubs(['ws-a'], purged), async (client, taskQueue) => {
    const before = Date.now();
    const result = await client.workflow.execute(purgeSandbox, {
      taskQueue,
      workflowId: `test-purge-now-${randomUUID()}`,
      args: [{ maxAgeHours: 2 }],
    });
    const after = Date.now();
    const cutoff = Date.parse(result.cutoff);
    t.true(cutoff >= before - 2 * HOUR - 1_000 && cutoff <= after - 2 * HOUR, result.cutoff);
  });
  t.is(purged.length, 1);
});

test('purgeSandbox retries a purge that fails, and finishes it', async (t) => {
  let attempts = 0;
  const activities: Activities = {
    listWorkspacesAfter: async (after) => (after === null ? ['ws-1'] : []),
    purgeEnvironment: async () => {
      attempts++;
      if (attempts < 3) throw ApplicationFailure.retryable('database away', 'Transient');
      return counts(5, 0);
    },
  };
  await withWorker(activities, async (client, taskQueue) => {
    const result = await client.workflow.execute(purgeSandbox, {
      taskQueue,
      workflowId: `test-purge-retry-${randomUUID()}`,
      args: [{}],
    });
    t.is(result.rows, 5);
  });
  t.is(attempts, 3);
});
