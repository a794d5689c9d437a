import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import test from 'ava';
import { loadConfig } from '../../lib/config.ts';
import { VALISE_SEARCH_ATTRIBUTES, workflowLabels } from '../../lib/temporal-search-attributes.ts';
import { continuesOnce } from '../fixtures/workflows/continue-once.ts';

// A workflow that continues as new (the owner expiry and the sandbox purge do, when their history
// grows long) stays findable by its search attributes (docs/operations.md, "Finding a workspace's
// workflows"): the SDK carries them to the next run, checked here against the real dev server.

const config = loadConfig();
Runtime.install({ logger: new DefaultLogger('ERROR') });

test("a run continued as new keeps its workspace's search attributes", async (t) => {
  const taskQueue = `test-continue-${randomUUID()}`;
  const native = await NativeConnection.connect({ address: config.temporal.address });
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const worker = await Worker.create({
    connection: native,
    namespace: config.temporal.namespace,
    taskQueue,
    workflowBundle: await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('../fixtures/workflows/continue-once.ts', import.meta.url)),
      logger: new DefaultLogger('WARN'),
    }),
  });
  const tenant = { workspaceId: randomUUID(), environment: 'live' as const };
  const workflowId = `test-continue-${randomUUID()}`;
  let firstRunId = '';
  try {
    await worker.runUntil(async () => {
      const handle = await client.workflow.start(continuesOnce, {
        taskQueue,
        workflowId,
        args: [0],
        ...workflowLabels(tenant, 'coffre', workflowId),
      });
      firstRunId = handle.firstExecutionRunId;
      t.is(await handle.result(), 1, 'the second run ended');
    });
    const last = await client.workflow.getHandle(workflowId).describe();
    t.not(last.runId, firstRunId, 'the description is of the run continued as new');
    t.is(last.typedSearchAttributes.get(VALISE_SEARCH_ATTRIBUTES.workspaceId), tenant.workspaceId);
    t.is(last.typedSearchAttributes.get(VALISE_SEARCH_ATTRIBUTES.resourceType), 'coffre');
  } finally {
    await connection.close();
    await native.close();
  }
});
