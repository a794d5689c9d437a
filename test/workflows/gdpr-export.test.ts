import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { WorkflowBundle } from '@temporalio/worker';
import test from 'ava';
import type { createGdprActivities } from '../../activities/gdpr.ts';
import { gdprExport, gdprExportProgressQuery } from '../../workflows/gdprExport.ts';
import { bundleWorkflows, withWorker } from '../helpers/workflows.ts';

// The GDPR export workflow against the real Temporal dev server, with stub activities: one step per
// family in order, then the seal, the wait for its retention and the deletion; a step that fails
// for good ends the export `failed`.

type Activities = ReturnType<typeof createGdprActivities>;

let bundle: WorkflowBundle;
test.before(async () => {
  bundle = await bundleWorkflows();
});

function stubs(calls: string[], overrides: Partial<Activities> = {}): Activities {
  return {
    beginGdprExport: async () => {
      calls.push('begin');
      return { families: ['workspaces', 'transfers', 'audit'] };
    },
    collectGdprExportFamily: async (_id: string, family: string) => {
      calls.push(`collect:${family}`);
      return 1;
    },
    sealGdprExport: async () => {
      calls.push('seal');
      return 100;
    },
    gdprExportRetention: async () => new Date(Date.now() + 1500).toISOString(),
    failGdprExport: async (_id: string, message: string) => {
      calls.push(`fail:${message}`);
    },
    expireGdprExport: async () => {
      calls.push('expire');
    },
    ...overrides,
  } as Activities;
}

test('collects family by family, seals, and deletes the export once its retention ends', async (t) => {
  const calls: string[] = [];
  await withWorker(bundle, stubs(calls), async (client, taskQueue) => {
    const handle = await client.workflow.start(gdprExport, {
      taskQueue,
      workflowId: `test-gdpr-export-${randomUUID()}`,
      args: [{ exportId: 'x1' }],
    });
    t.is(await handle.result(), 'expired');
    const progress = await handle.query(gdprExportProgressQuery);
    t.like(progress, { done: 3, total: 3, phase: 'expired' });
  });
  t.deepEqual(calls, ['begin', 'collect:workspaces', 'collect:transfers', 'collect:audit', 'seal', 'expire']);
});

test('a family that cannot be collected ends the export failed, without sealing it', async (t) => {
  const calls: string[] = [];
  const broken = {
    collectGdprExportFamily: async (_id: string, family: string) => {
      calls.push(`collect:${family}`);
      if (family === 'transfers') throw ApplicationFailure.nonRetryable('object store refused');
      return 1;
    },
  };
  await withWorker(bundle, stubs(calls, broken), async (client, taskQueue) => {
    const result = await client.workflow.execute(gdprExport, {
      taskQueue,
      workflowId: `test-gdpr-export-${randomUUID()}`,
      args: [{ exportId: 'x2' }],
    });
    t.is(result, 'failed');
  });
  t.deepEqual(calls, ['begin', 'collect:workspaces', 'collect:transfers', 'fail:object store refused']);
});

test('an export already ended (or gone) is left alone', async (t) => {
  const calls: string[] = [];
  await withWorker(bundle, stubs(calls, { beginGdprExport: async () => null }), async (client, taskQueue) => {
    const result = await client.workflow.execute(gdprExport, {
      taskQueue,
      workflowId: `test-gdpr-export-${randomUUID()}`,
      args: [{ exportId: 'x3' }],
    });
    t.is(result, 'ended');
  });
  t.deepEqual(calls, []);
});
