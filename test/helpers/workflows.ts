import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type WorkflowBundle,
} from '@temporalio/worker';
import { loadConfig } from '../../lib/config.ts';

// Workflow tests run the real workflows against the real Temporal dev server,
// with stub activities on a task queue of their own per test: what the
// workflow does, not what the database does.

const config = loadConfig();
const workflowsPath = fileURLToPath(new URL('../../workflows/index.ts', import.meta.url));
Runtime.install({ logger: new DefaultLogger('ERROR') });

/** The project's workflows, bundled once per test file. */
export function bundleWorkflows(): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') });
}

/**
 * How long a test's worker waits for its activities once `run` is over. A stub still waiting when
 * its test failed (a held scan never released) would otherwise hold the worker's shutdown, and the
 * test, forever.
 */
const SHUTDOWN_FORCE_TIME = '10s';

/** A worker of `bundle` with `activities` on a fresh task queue, and a client to reach it. */
async function createWorker(bundle: WorkflowBundle, activities: object) {
  const taskQueue = `test-${randomUUID()}`;
  const nativeConnection = await NativeConnection.connect({ address: config.temporal.address });
  const connection = await Connection.connect({ address: config.temporal.address });
  const worker = await Worker.create({
    connection: nativeConnection,
    namespace: config.temporal.namespace,
    taskQueue,
    workflowBundle: bundle,
    activities,
    shutdownForceTime: SHUTDOWN_FORCE_TIME,
  });
  return {
    worker,
    taskQueue,
    client: new Client({ connection, namespace: config.temporal.namespace }),
    close: async () => {
      await connection.close();
      await nativeConnection.close();
    },
  };
}

/** Runs `run` beside a worker of `bundle` with `activities` on a fresh task queue. */
export async function withWorker(
  bundle: WorkflowBundle,
  activities: object,
  run: (client: Client, taskQueue: string) => Promise<void>,
) {
  const { worker, client, taskQueue, close } = await createWorker(bundle, activities);
  try {
    await worker.runUntil(run(client, taskQueue));
  } finally {
    await close();
  }
}

export type SharedWorker = {
  client: Client;
  taskQueue: string;
  /** Rejects once the worker stops, which only an error does before `stop`. */
  failed: Promise<never>;
  stop: () => Promise<void>;
};

/**
 * Starts a worker of the project's workflows with `activities` on a fresh task queue, to serve a
 * whole test file: the file's after.always hook calls `stop`.
 */
export async function startSharedWorker(activities: object): Promise<SharedWorker> {
  const { worker, client, taskQueue, close } = await createWorker(await bundleWorkflows(), activities);
  const running = worker.run();
  const failed = running.then(() => {
    throw new Error('the shared worker stopped');
  });
  failed.catch(() => {}); // awaited only by the tests running when it fails
  return {
    client,
    taskQueue,
    failed,
    stop: async () => {
      worker.shutdown();
      await running.finally(close);
    },
  };
}

/**
 * Polls a stub's recorded calls until `done` holds: 60 s at most, as a test file's workflows start
 * at once beside another file's tests (a CI run once saw no call in 30 s).
 */
export async function untilCalled(calls: string[], done: (calls: string[]) => boolean, what: string) {
  const started = Date.now();
  for (const deadline = started + 60_000; !done(calls); ) {
    if (Date.now() > deadline) {
      throw new Error(`${what} did not happen in ${Date.now() - started} ms; calls: ${calls.join(', ') || 'none'}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
