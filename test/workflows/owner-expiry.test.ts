import { randomUUID } from 'node:crypto';
import type { WorkflowBundle } from '@temporalio/worker';
import test from 'ava';
import type { ExpiryOutcome, OwnerExpiry } from '../../activities/lifecycles.ts';
import { storedFilesDeletedSignal } from '../../workflows/fileLifecycle.ts';
import { expiryWorkflowId, type LifecycleFamily, storedFilesWorkflowId } from '../../workflows/ids.ts';
import { expiryChangedSignal, ownerDeletedSignal, ownerExpiry } from '../../workflows/ownerExpiry.ts';
import { bundleWorkflows, untilCalled, withWorker } from '../helpers/workflows.ts';

// The generic expiry workflow against the real Temporal dev server, with stub activities named as
// a family's are (`<family>.<step>`): what it does, in order, whichever family it runs for.

let bundle: WorkflowBundle;
test.before(async () => {
  bundle = await bundleWorkflows();
});

const soon = (ms: number) => new Date(Date.now() + ms).toISOString();

type Stubs = {
  loadExpiry?: () => Promise<OwnerExpiry>;
  expire?: () => Promise<ExpiryOutcome>;
};

/** A family's expiry steps recording `step:id`, and the file purge `ownerExpiry` calls for ended files. */
function stubs(family: LifecycleFamily, calls: string[], answers: Stubs) {
  const recorded =
    <T>(step: string, answer: () => Promise<T>) =>
    async (id: string) => {
      calls.push(`${step}:${id}`);
      return answer();
    };
  const noExpiry = async (): Promise<OwnerExpiry> => ({ state: 'live', expiresAt: null });
  return {
    [`${family}.loadExpiry`]: recorded('loadExpiry', answers.loadExpiry ?? noExpiry),
    [`${family}.expire`]: recorded('expire', answers.expire ?? (async () => ({ final: true, fileOwnerIds: [] }))),
    [`${family}.purge`]: recorded('purge', async () => undefined),
  };
}

test('an owner expires at its expiry, moved by a signal; a final end removes its files and ends their workflows', async (t) => {
  const calls: string[] = [];
  let expiresAt: string | null = null;
  const fileId = randomUUID();
  const activities = stubs('coffres', calls, {
    loadExpiry: async () => ({ state: 'live', expiresAt }),
    expire: async () => ({ final: true, fileOwnerIds: [fileId] }),
  });
  await withWorker(bundle, activities, async (client, taskQueue) => {
    // A file's workflow, waiting for its deletion: the expiry must end it.
    const fileWorkflow = await client.workflow.start('fileLifecycle', {
      taskQueue: `${taskQueue}-unpolled`,
      workflowId: storedFilesWorkflowId('coffres', fileId),
      args: [{ family: 'coffres', ownerId: fileId }],
    });
    const ownerId = randomUUID();
    const handle = await client.workflow.start(ownerExpiry, {
      taskQueue,
      workflowId: expiryWorkflowId('coffres', ownerId),
      args: [{ family: 'coffres', ownerId }],
    });
    await untilCalled(calls, (seen) => seen.length === 1, 'the first read');
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.deepEqual(calls, [`loadExpiry:${ownerId}`], 'no expiry: it waits');
    const due = Date.now() + 1000;
    expiresAt = new Date(due).toISOString();
    await handle.signal(expiryChangedSignal);
    t.is(await handle.result(), 'expired');
    t.true(Date.now() >= due, 'not before the moved expiry');
    // Read at the start, on the signal, and (unless the machine was slow enough for the signal's
    // read to find it due) when the timer fires; then expired once, and the file removed.
    t.deepEqual(
      calls.filter((call) => !call.startsWith('loadExpiry')),
      [`expire:${ownerId}`, `purge:${fileId}`],
    );
    t.true(calls.filter((call) => call.startsWith('loadExpiry')).length >= 2, 'read again on the signal');
    const history = await fileWorkflow.fetchHistory();
    const signalled = history.events?.some(
      (event) => event.workflowExecutionSignaledEventAttributes?.signalName === storedFilesDeletedSignal.name,
    );
    t.true(signalled, "the file's workflow was told its files are deleted");
    await fileWorkflow.terminate('test over');
  });
});

test('an owner that may reopen is waited on after its expiry, expires again when moved, and ends when deleted', async (t) => {
  const calls: string[] = [];
  let expiresAt: string | null = soon(500);
  const activities = stubs('intakes', calls, {
    loadExpiry: async () => ({ state: 'live', expiresAt }),
    expire: async () => ({ final: false, fileOwnerIds: [] }),
  });
  const expiries = () => calls.filter((call) => call === 'expire:in_1').length;
  await withWorker(bundle, activities, async (client, taskQueue) => {
    const handle = await client.workflow.start(ownerExpiry, {
      taskQueue,
      workflowId: `test-owner-expiry-${randomUUID()}`,
      args: [{ family: 'intakes', ownerId: 'in_1' }],
    });
    await untilCalled(calls, () => expiries() === 1, 'the expiry');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const readsAfterExpiry = calls.length;
    t.is(calls.at(-1), 'expire:in_1', 'expired, it waits for a change rather than reading again');
    // Reopened with a later expiry, then expired again.
    const due = Date.now() + 500;
    expiresAt = new Date(due).toISOString();
    await handle.signal(expiryChangedSignal);
    await untilCalled(calls, () => expiries() === 2, 'the second expiry');
    t.true(Date.now() >= due, 'not before the moved expiry');
    t.true(calls.length > readsAfterExpiry + 1, 'read again on the signal');
    await handle.signal(ownerDeletedSignal);
    t.is(await handle.result(), 'deleted');
  });
  t.is(calls.at(-1), 'expire:in_1', 'deleted, it reads nothing more');
});

test('a deleted owner ends its expiry workflow without expiring it', async (t) => {
  const calls: string[] = [];
  const activities = stubs('coffres', calls, {
    loadExpiry: async () => ({ state: 'live', expiresAt: soon(3_600_000) }),
  });
  await withWorker(bundle, activities, async (client, taskQueue) => {
    const handle = await client.workflow.start(ownerExpiry, {
      taskQueue,
      workflowId: `test-owner-expiry-${randomUUID()}`,
      args: [{ family: 'coffres', ownerId: 'cof_2' }],
    });
    await untilCalled(calls, (seen) => seen.length === 1, 'the first read');
    await handle.signal(ownerDeletedSignal);
    t.is(await handle.result(), 'deleted');
    t.deepEqual(calls, ['loadExpiry:cof_2'], 'not read again once deleted');
  });
});

test('an owner found expired already (an earlier try ended it) has its files removed and the workflow ends', async (t) => {
  const calls: string[] = [];
  const activities = stubs('coffres', calls, {
    loadExpiry: async () => ({ state: 'expired', expiresAt: null }),
    expire: async () => ({ final: true, fileOwnerIds: ['item-1', 'item-2'] }),
  });
  await withWorker(bundle, activities, async (client, taskQueue) => {
    const result = await client.workflow.execute(ownerExpiry, {
      taskQueue,
      workflowId: `test-owner-expiry-${randomUUID()}`,
      args: [{ family: 'coffres', ownerId: 'cof_3' }],
    });
    t.is(result, 'expired');
  });
  t.deepEqual(calls, ['loadExpiry:cof_3', 'expire:cof_3', 'purge:item-1', 'purge:item-2']);
});
