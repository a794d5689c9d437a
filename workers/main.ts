import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../activities/index.ts';
import { openWorkerResources } from '../lib/composition.ts';
import { loadConfig } from '../lib/config.ts';
import { startDispatcher } from '../lib/events/dispatcher.ts';
import { createLogger } from '../lib/observability/logging.ts';
import { serveMetrics } from '../lib/observability/metrics.ts';
import { startTracing } from '../lib/observability/tracing.ts';
import { installWorkerRuntime } from '../lib/observability/worker-runtime.ts';
import { planRuleRuns } from '../lib/rules/plan.ts';
import { startObjectSweeper } from '../lib/storage/sweeper.ts';
import { dropTestSandboxPurgeSchedule, ensureSandboxPurgeSchedule } from '../lib/temporal.ts';
import { startSender } from '../lib/webhooks/sender.ts';

// The activity worker: runs every workflow in workflows/ and the activities
// they call, with the real database, object store, clamd and SMTP server.
const config = loadConfig();
const logger = await createLogger(config, 'worker');
const logTo = (component: string) => {
  const child = logger.child({ component });
  return (message: string) => child.warn(message);
};
// Before the first connection: the SDK's runtime (its logs and metrics), and the tracer provider.
const sdkMetrics = await installWorkerRuntime(config, logger);
const tracing = await startTracing(config, 'valise-worker');
const { db, connection, temporal, objects, keyring, scanner, scanSlots, mailer, sealKey, close } =
  await openWorkerResources(config, { tracing });

const activities = createActivities({ config, db, objects, keyring, scanner, scanSlots, mailer, sealKey });
const worker = await Worker.create({
  connection,
  namespace: config.temporal.namespace,
  taskQueue: config.temporal.taskQueue,
  workflowsPath: fileURLToPath(new URL('../workflows/index.ts', import.meta.url)),
  activities,
  ...tracing?.workerOptions,
});

// The outbox relay and the webhook sender live with the workers: no API process is needed for
// events to flow. The dispatcher hands this sender what it queues, leased; other processes' senders
// hear a NOTIFY for what this one had no room for.
const sender = startSender({
  db,
  databaseUrl: config.database.url,
  temporal,
  taskQueue: config.temporal.taskQueue,
  webhooks: config.webhooks,
  sealKey,
  log: logTo('sender'),
});
const dispatcher = startDispatcher({
  db,
  databaseUrl: config.database.url,
  temporal,
  taskQueue: config.temporal.taskQueue,
  sender,
  planRuns: planRuleRuns,
  log: logTo('dispatcher'),
});

// The backstop for objects an ended resource's workflow never deleted (a lost signal), and for
// transfers whose workflow is gone and so never expire.
const sweeper = startObjectSweeper({
  db,
  objects,
  expire: (transferId) => activities.endTransfer(transferId, 'expired', 'expired'),
  intervalMs: config.objectSweep.intervalMs,
  log: logTo('sweeper'),
});

// The sandbox's purge after 24 hours runs on a Temporal Schedule, visible and triggerable in the
// Temporal UI; each worker makes sure it exists, with this deployment's interval.
const purgeSchedule = await ensureSandboxPurgeSchedule(temporal, config);
const metrics = await serveMetrics(config.observability.workerMetrics, {
  log: logTo('metrics'),
  ...(sdkMetrics ? { more: sdkMetrics } : {}),
});

logger.info(`schedule ${purgeSchedule} every ${config.sandboxPurge.intervalMs} ms`);
logger.info(
  { taskQueue: config.temporal.taskQueue, metrics: metrics?.url },
  `polling task queue ${config.temporal.taskQueue} on ${config.temporal.address}`,
);
// Worker.run installs SIGINT/SIGTERM handlers and drains in-flight tasks.
await worker.run();
await dropTestSandboxPurgeSchedule(temporal, config);
await sweeper.stop();
await dispatcher.stop();
await sender.stop();
await metrics?.close();
await tracing?.shutdown();
await close();
logger.flush();
