import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import test from 'ava';
import type { createCoffreActivities, ItemPlan } from '../../activities/coffres.ts';
import { coffreInvitation } from '../../workflows/coffreInvitation.ts';
import {
  coffreItemDeletedSignal,
  coffreItemLifecycle,
  coffreItemUploadedSignal,
} from '../../workflows/coffreItemLifecycle.ts';
import { coffreDeletedSignal, coffreExpiryChangedSignal, coffreLifecycle } from '../../workflows/coffreLifecycle.ts';
import { coffreItemWorkflowId } from '../../workflows/ids.ts';
import { bundleWorkflows, untilCalled, withWorker as withBundledWorker } from '../helpers/workflows.ts';

// The vault workflows against the real Temporal dev server, with stub
// activities that record their calls: what each workflow does, in order.

type Activities = ReturnType<typeof createCoffreActivities>;

let bundle: WorkflowBundle;
test.before(async () => {
  bundle = await bundleWorkflows();
});

/** Stubs that record each call as `name:arg`; `overrides` answer differently. */
function stubs(calls: string[], overrides: Partial<Activities> = {}): Activities {
  const record =
    <T>(name: string, answer: T) =>
    async (arg?: string) => {
      calls.push(arg === undefined ? name : `${name}:${arg}`);
      return answer;
    };
  const plan: ItemPlan = {
    status: 'uploading',
    uploaded: false,
    uploadDeadline: new Date(Date.now() + 60_000).toISOString(),
  };
  return {
    loadItemPlan: record('loadItemPlan', plan),
    receiveItem: record('receiveItem', true),
    scanCoffreItem: record('scanCoffreItem', 'clean'),
    settleItemScan: record('settleItemScan', 'available' as const),
    destroyItem: record('destroyItem', undefined),
    purgeItemBlob: record('purgeItemBlob', undefined),
    loadCoffreExpiry: record('loadCoffreExpiry', { status: 'active', expiresAt: null }),
    expireCoffre: record('expireCoffre', [] as string[]),
    sendCoffreInvitation: record('sendCoffreInvitation', undefined),
    ...overrides,
  } as Activities;
}

const withWorker = (activities: Activities, run: (client: Client, taskQueue: string) => Promise<void>) =>
  withBundledWorker(bundle, activities, run);

test('an item is received, scanned and made available, and its blob removed once deleted', async (t) => {
  const calls: string[] = [];
  await withWorker(stubs(calls), async (client, taskQueue) => {
    const itemId = randomUUID();
    const handle = await client.workflow.start(coffreItemLifecycle, {
      taskQueue,
      workflowId: coffreItemWorkflowId(itemId),
      args: [{ itemId }],
    });
    await untilCalled(calls, (c) => c.includes(`loadItemPlan:${itemId}`), 'the first look');
    await handle.signal(coffreItemUploadedSignal);
    await untilCalled(calls, (c) => c.includes(`settleItemScan:${itemId}`), 'the scan');
    t.false(
      calls.some((c) => c.startsWith('purgeItemBlob')),
      'an available item keeps its blob',
    );
    await handle.signal(coffreItemDeletedSignal);
    t.is(await handle.result(), 'deleted');
    t.deepEqual(calls, [
      `loadItemPlan:${itemId}`,
      `receiveItem:${itemId}`,
      `scanCoffreItem:${itemId}`,
      `settleItemScan:${itemId}`,
      `purgeItemBlob:${itemId}`,
    ]);
  });
});

test('an item not uploaded by its deadline is destroyed; an infected one is purged after its scan', async (t) => {
  const late: string[] = [];
  const past: ItemPlan = {
    status: 'uploading',
    uploaded: false,
    uploadDeadline: new Date(Date.now() + 500).toISOString(),
  };
  await withWorker(stubs(late, { loadItemPlan: async () => past }), async (client, taskQueue) => {
    const itemId = randomUUID();
    const result = await client.workflow.execute(coffreItemLifecycle, {
      taskQueue,
      workflowId: coffreItemWorkflowId(itemId),
      args: [{ itemId }],
    });
    t.is(result, 'upload_incomplete');
    t.deepEqual(late, [`destroyItem:${itemId}`, `purgeItemBlob:${itemId}`]);
  });

  const infected: string[] = [];
  const uploaded: ItemPlan = { status: 'uploading', uploaded: true, uploadDeadline: new Date().toISOString() };
  const activities = stubs(infected, {
    loadItemPlan: async () => uploaded,
    settleItemScan: async () => 'rejected' as const,
  });
  await withWorker(activities, async (client, taskQueue) => {
    const itemId = randomUUID();
    const result = await client.workflow.execute(coffreItemLifecycle, {
      taskQueue,
      workflowId: coffreItemWorkflowId(itemId),
      args: [{ itemId }],
    });
    t.is(result, 'rejected');
    t.deepEqual(infected, [`receiveItem:${itemId}`, `scanCoffreItem:${itemId}`, `purgeItemBlob:${itemId}`]);
  });
});

test('an item whose scan fails for good is rejected and purged, not left scanning', async (t) => {
  const calls: string[] = [];
  const uploaded: ItemPlan = { status: 'uploading', uploaded: true, uploadDeadline: new Date().toISOString() };
  const activities = stubs(calls, {
    loadItemPlan: async () => uploaded,
    scanCoffreItem: async (itemId: string) => {
      calls.push(`scanCoffreItem:${itemId}`);
      throw ApplicationFailure.nonRetryable('the item does not match its upload', 'ChecksumMismatch');
    },
    rejectUnverifiedItem: async (itemId: string) => {
      calls.push(`rejectUnverifiedItem:${itemId}`);
    },
  });
  await withWorker(activities, async (client, taskQueue) => {
    const itemId = randomUUID();
    const result = await client.workflow.execute(coffreItemLifecycle, {
      taskQueue,
      workflowId: coffreItemWorkflowId(itemId),
      args: [{ itemId }],
      workflowExecutionTimeout: '1 minute',
    });
    t.is(result, 'scan_failed');
    t.deepEqual(calls, [
      `receiveItem:${itemId}`,
      `scanCoffreItem:${itemId}`,
      `rejectUnverifiedItem:${itemId}`,
      `purgeItemBlob:${itemId}`,
    ]);
  });
});

test('a vault expires at its expiry, moved by a signal; its items are purged', async (t) => {
  const calls: string[] = [];
  let expiresAt: string | null = null;
  const activities = stubs(calls, {
    loadCoffreExpiry: async () => ({ status: 'active', expiresAt }),
    expireCoffre: async (id: string) => {
      calls.push(`expireCoffre:${id}`);
      return ['item-1', 'item-2'];
    },
  });
  await withWorker(activities, async (client, taskQueue) => {
    const handle = await client.workflow.start(coffreLifecycle, {
      taskQueue,
      workflowId: `test-coffre-${randomUUID()}`,
      args: [{ coffreId: 'cof_1' }],
    });
    // No expiry yet: it waits; then one second from now.
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.deepEqual(calls, []);
    const due = Date.now() + 1000;
    expiresAt = new Date(due).toISOString();
    await handle.signal(coffreExpiryChangedSignal);
    t.is(await handle.result(), 'expired');
    t.true(Date.now() >= due);
    t.deepEqual(calls, ['expireCoffre:cof_1', 'purgeItemBlob:item-1', 'purgeItemBlob:item-2']);
  });
});

test('a deleted vault ends its expiry workflow without expiring it', async (t) => {
  const calls: string[] = [];
  const activities = stubs(calls, {
    loadCoffreExpiry: async () => ({ status: 'active', expiresAt: new Date(Date.now() + 3_600_000).toISOString() }),
  });
  await withWorker(activities, async (client, taskQueue) => {
    const handle = await client.workflow.start(coffreLifecycle, {
      taskQueue,
      workflowId: `test-coffre-${randomUUID()}`,
      args: [{ coffreId: 'cof_2' }],
    });
    await handle.signal(coffreDeletedSignal);
    t.is(await handle.result(), 'deleted');
    t.deepEqual(calls, []);
  });
});

test('an invitation run mails the member once', async (t) => {
  const calls: string[] = [];
  await withWorker(stubs(calls), async (client, taskQueue) => {
    const result = await client.workflow.execute(coffreInvitation, {
      taskQueue,
      workflowId: `test-invitation-${randomUUID()}`,
      args: [{ memberId: 'cofm_1', nonce: 'n1' }],
    });
    t.is(result, 'sent');
    t.deepEqual(calls, ['sendCoffreInvitation:cofm_1']);
  });
});
