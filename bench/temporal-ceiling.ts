import { randomUUID } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { loadConfig } from '../lib/config.ts';
import { type TemporalServerInfo, temporalServerInfo } from '../test/helpers/temporal-server.ts';
import { runContext, writeResults } from './results.ts';
import { oneLocalActivity } from './temporal-ceiling-workflow.ts';

// The ceiling of one workflow per delivery: how many workflows shaped like a
// webhook delivery (a start, one workflow task with one local activity, a
// completion) the Temporal at TEMPORAL_ADDRESS runs per second with an empty
// activity, with a worker in this process on a fresh task queue. Started the
// way the dispatcher starts deliveries (no one waits for a result), and timed
// like bench/webhooks.ts: from the first start until the last activity has run.
// bench/webhooks.ts measures it after its burst, in the same run; alone:
// sh scripts/node.sh bench/temporal-ceiling.ts    (bench/README.md)

const WORKFLOWS = Number(process.env.BENCH_CEILING_WORKFLOWS ?? 2_000);
const STARTING = 32; // start calls in flight at once, as lib/events/dispatcher.ts's START_CONCURRENCY
const WARMUP = 50;

export type TemporalCeiling = {
  temporal: TemporalServerInfo;
  workflows: number;
  seconds: number;
  workflows_per_second: number;
};

export async function measureTemporalCeiling(workflows = WORKFLOWS): Promise<TemporalCeiling> {
  const config = loadConfig();
  const taskQueue = `bench-ceiling-${randomUUID()}`;
  const ran = new Set<string>();
  let waiting: { count: number; resolve: () => void } | null = null;
  const workerConnection = await NativeConnection.connect({ address: config.temporal.address });
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const worker = await Worker.create({
    connection: workerConnection,
    namespace: config.temporal.namespace,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('./temporal-ceiling-workflow.ts', import.meta.url)),
    activities: {
      // A set, not a counter: a local activity retried after a lost task must not count twice.
      nothing: async () => {
        const workflowId = Context.current().info.workflowExecution?.workflowId;
        if (workflowId) ran.add(workflowId);
        if (waiting && ran.size >= waiting.count) waiting.resolve();
      },
    },
  });
  const run = async (count: number) => {
    const target = ran.size + count;
    const allRan = new Promise<void>((resolve) => {
      waiting = { count: target, resolve };
    });
    let next = 0;
    const lane = async () => {
      while (next < count) {
        next++;
        await client.workflow.start(oneLocalActivity, { taskQueue, workflowId: `bench-ceiling-${randomUUID()}` });
      }
    };
    await Promise.all(Array.from({ length: Math.min(STARTING, count) }, lane));
    await allRan;
  };
  try {
    return await worker.runUntil(async () => {
      await run(WARMUP); // the bundle's first tasks, the connections
      const started = performance.now();
      await run(workflows);
      const seconds = (performance.now() - started) / 1000;
      return {
        temporal: await temporalServerInfo(config.temporal.address),
        workflows,
        seconds: Math.round(seconds * 100) / 100,
        workflows_per_second: Math.round((workflows / seconds) * 10) / 10,
      };
    });
  } finally {
    await connection.close();
    await workerConnection.close();
  }
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const startedAt = new Date();
  const ceiling = await measureTemporalCeiling();
  console.log(
    `| Temporal ${ceiling.temporal.server_version} on ${ceiling.temporal.persistence} | ${ceiling.workflows} workflows | ${ceiling.workflows_per_second} workflows/s |`,
  );
  process.stderr.write(
    `bench: results in ${writeResults('temporal-ceiling', startedAt, { ...runContext(startedAt), ...ceiling })}\n`,
  );
}
