import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createApiKeyActivities } from '../activities/api-keys.ts';
import { loadConfig } from '../lib/config.ts';
import { createDatabasePool } from '../lib/db/pool.ts';

// The activity worker: runs every workflow in workflows/ and the activities
// they call, with the real database (and, as features land, S3, clamd, SMTP).
const config = loadConfig();
const db = await createDatabasePool(config.database.url, config.database.poolSize);
const connection = await NativeConnection.connect({ address: config.temporal.address });

const worker = await Worker.create({
  connection,
  namespace: config.temporal.namespace,
  taskQueue: config.temporal.taskQueue,
  workflowsPath: fileURLToPath(new URL('../workflows/index.ts', import.meta.url)),
  activities: { ...createApiKeyActivities({ db }) },
});

process.stderr.write(`worker: polling task queue ${config.temporal.taskQueue} on ${config.temporal.address}\n`);
// Worker.run installs SIGINT/SIGTERM handlers and drains in-flight tasks.
await worker.run();
await db.end();
await connection.close();
