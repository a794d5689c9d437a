import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createApiKeyActivities } from '../activities/api-keys.ts';
import { createRuleActivities } from '../activities/rules.ts';
import { createTransferActivities } from '../activities/transfers.ts';
import { createWebhookActivities } from '../activities/webhooks.ts';
import { loadConfig } from '../lib/config.ts';
import { parseKeyring } from '../lib/crypto/key-wrap.ts';
import { deriveKey } from '../lib/crypto/secrets.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { startDispatcher } from '../lib/events/dispatcher.ts';
import { createMailer } from '../lib/mail/mailer.ts';
import { planRuleRuns } from '../lib/rules/plan.ts';
import { createScanner } from '../lib/scan/clamd.ts';
import { createObjectStore } from '../lib/storage/object-store.ts';
import { closeAgents } from '../lib/webhooks/post.ts';

// The activity worker: runs every workflow in workflows/ and the activities
// they call, with the real database, object store, clamd and SMTP server.
const config = loadConfig();
const db = await createDatabasePool(config.database.url, config.database.poolSize);
const connection = await NativeConnection.connect({ address: config.temporal.address });
const mailer = createMailer(config, {
  secure: config.smtp.secure,
  requireTLS: config.smtp.requireTLS,
  ...(config.smtp.auth ? { auth: config.smtp.auth } : {}),
});

const sealKey = deriveKey(config.secret, 'seal');

const worker = await Worker.create({
  connection,
  namespace: config.temporal.namespace,
  taskQueue: config.temporal.taskQueue,
  workflowsPath: fileURLToPath(new URL('../workflows/index.ts', import.meta.url)),
  activities: {
    ...createApiKeyActivities({ db }),
    ...createTransferActivities({
      config,
      db,
      objects: createObjectStore(config.s3),
      keyring: parseKeyring(config.masterKeys.spec, config.masterKeys.currentId),
      scanner: createScanner(config.clamd),
      mailer,
    }),
    ...createWebhookActivities({ config, db, sealKey }),
    ...createRuleActivities({ config, db, sealKey, mailer }),
  },
});

// The outbox relay lives with the workers: no API process is needed for events to flow.
// Its client shares the worker's connection, so Temporal can hand the first task of a
// delivery it starts straight back to this worker (eager start) instead of queueing it.
const temporal = new Client({ connection, namespace: config.temporal.namespace });
const dispatcher = startDispatcher({
  db,
  databaseUrl: config.database.url,
  temporal,
  taskQueue: config.temporal.taskQueue,
  retryScheduleMs: config.webhooks.retryScheduleMs,
  planRuns: planRuleRuns,
});

process.stderr.write(`worker: polling task queue ${config.temporal.taskQueue} on ${config.temporal.address}\n`);
// Worker.run installs SIGINT/SIGTERM handlers and drains in-flight tasks.
await worker.run();
await dispatcher.stop();
closeAgents();
await Promise.allSettled([db.end(), connection.close(), mailer.close()]);
