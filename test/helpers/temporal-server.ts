import { Connection } from '@temporalio/client';

// Which Temporal answers at an address: the dev server keeps everything in
// SQLite, the production-shaped server (VALISE_TEMPORAL=server) in PostgreSQL.
// Benches record it beside their figures; the server flavour's tests check it
// first, so that they cannot pass against the dev server.

export type TemporalServerInfo = { server_version: string; persistence: string; visibility: string };

export async function temporalServerInfo(address: string): Promise<TemporalServerInfo> {
  const connection = await Connection.connect({ address });
  try {
    const info = await connection.workflowService.getClusterInfo({});
    return {
      server_version: info.serverVersion ?? '',
      persistence: info.persistenceStore ?? '',
      visibility: info.visibilityStore ?? '',
    };
  } finally {
    await connection.close();
  }
}

/**
 * Resolves once a worker polls the task queue for workflow tasks. A worker
 * process that cannot connect at start-up exits, so a test that restarts
 * Temporal waits for this first.
 */
export async function workerPolling(address: string, namespace: string, taskQueue: string, timeoutMs = 60_000) {
  const connection = await Connection.connect({ address });
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // No task queue type: the server reads that as the workflow tasks' queue.
      const { pollers } = await connection.workflowService.describeTaskQueue({
        namespace,
        taskQueue: { name: taskQueue },
      });
      if ((pollers?.length ?? 0) > 0) return;
      if (Date.now() > deadline) throw new Error(`no worker polls ${taskQueue} after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    await connection.close();
  }
}
