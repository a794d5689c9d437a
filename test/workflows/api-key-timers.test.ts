import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import test from 'ava';
import type { createApiKeyActivities } from '../../activities/api-keys.ts';
import { endKeyRotationGrace } from '../../workflows/endKeyRotationGrace.ts';
import { expireApiKey } from '../../workflows/expireApiKey.ts';
import { bundleWorkflows, withWorker as withBundledWorker } from '../helpers/workflows.ts';

// The key timers against the real Temporal dev server, with stub activities on
// a task queue of their own: what the workflow does, not what the database does.

type Activities = ReturnType<typeof createApiKeyActivities>;

let bundle: WorkflowBundle;
test.before(async () => {
  // Bundle once for the file; each test runs its own worker on its own queue.
  bundle = await bundleWorkflows();
});

const withWorker = (activities: Activities, run: (client: Client, taskQueue: string) => Promise<void>) =>
  withBundledWorker(bundle, activities, run);

test('expireApiKey sleeps until the expiry time, then marks the key expired', async (t) => {
  const calls: Array<{ id: string; at: number }> = [];
  const activities = {
    markApiKeyExpired: async (id: string) => {
      calls.push({ id, at: Date.now() });
      return 'expired' as const;
    },
    retireRotatedKeyValue: async () => 'nothing-to-do' as const,
  };
  await withWorker(activities, async (client, taskQueue) => {
    const expiresAt = Date.now() + 1_500;
    const result = await client.workflow.execute(expireApiKey, {
      taskQueue,
      workflowId: `test-expiry-${randomUUID()}`,
      args: [{ apiKeyId: 'key-1', expiresAt: new Date(expiresAt).toISOString() }],
    });
    t.is(result, 'expired');
    t.is(calls.length, 1);
    t.is(calls[0]?.id, 'key-1');
    t.true((calls[0]?.at ?? 0) >= expiresAt);
  });
});

test('expireApiKey retries an activity that finds the key not due yet', async (t) => {
  let attempts = 0;
  const activities = {
    markApiKeyExpired: async () => {
      attempts++;
      if (attempts === 1) throw ApplicationFailure.retryable('not due yet', 'NotDueYet');
      return 'expired' as const;
    },
    retireRotatedKeyValue: async () => 'nothing-to-do' as const,
  };
  await withWorker(activities, async (client, taskQueue) => {
    const result = await client.workflow.execute(expireApiKey, {
      taskQueue,
      workflowId: `test-expiry-retry-${randomUUID()}`,
      args: [{ apiKeyId: 'key-2', expiresAt: new Date().toISOString() }],
    });
    t.is(result, 'expired');
    t.is(attempts, 2);
  });
});

test('endKeyRotationGrace retires the old value when the grace period ends', async (t) => {
  const retired: string[] = [];
  const activities = {
    markApiKeyExpired: async () => 'nothing-to-do' as const,
    retireRotatedKeyValue: async (secretId: string) => {
      retired.push(secretId);
      return 'retired' as const;
    },
  };
  await withWorker(activities, async (client, taskQueue) => {
    const validUntil = Date.now() + 1_000;
    const started = Date.now();
    const result = await client.workflow.execute(endKeyRotationGrace, {
      taskQueue,
      workflowId: `test-grace-${randomUUID()}`,
      args: [{ secretId: 'secret-1', validUntil: new Date(validUntil).toISOString() }],
    });
    t.is(result, 'retired');
    t.deepEqual(retired, ['secret-1']);
    t.true(Date.now() - started >= 900);
  });
});
