import { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { Redis } from 'ioredis';
import type { DatabasePool } from 'slonik';
import type { Config } from './config.ts';
import { type Keyring, parseKeyring } from './crypto/key-wrap.ts';
import { deriveKey } from './crypto/secrets.ts';
import { createDatabasePool } from './db/pool.ts';
import { temporalFamilyWorkflows } from './family-workflows.ts';
import { Semaphore } from './in-parallel.ts';
import { createMailer, type Mailer } from './mail/mailer.ts';
import type { Tracing } from './observability/tracing.ts';
import { createScanner, type Scanner } from './scan/clamd.ts';
import { buildServices, type Services } from './services.ts';
import { createObjectStore, type ObjectStore } from './storage/object-store.ts';
import { connectTemporal } from './temporal.ts';
import { closeAgents } from './webhooks/post.ts';

// The composition root: every long-lived client a process holds, opened from its Config here and
// closed here. The API (api/main.ts, and test/helpers/api.ts for the tests' servers) and the
// worker (workers/main.ts) each call one opener; what only that process runs (the hapi server;
// the Temporal Worker and the outbox dispatcher) stays in its main file, is built from what the
// opener returns, and is stopped before close().

export type ApiResources = {
  config: Config;
  db: DatabasePool;
  /** Rate-limit counters (api/rate-limiter.ts) and their health probe. */
  redis: Redis;
  temporal: Client;
  services: Services;
  /** After the server has stopped: flushes what is buffered, then closes every connection. */
  close: () => Promise<void>;
};

export type ApiResourceOptions = {
  /**
   * Queue Redis commands until the connection is up, instead of failing them at once (ioredis'
   * offline queue). The tests' servers do, so a health check right after start waits for Redis.
   */
  queueUntilRedisConnects?: boolean;
  /** The process's tracing (api/main.ts): the Temporal client's starts and signals join the request's trace. */
  tracing?: Tracing | null;
  /** Where the process's warnings go (its logger); stderr when omitted. */
  log?: (message: string) => void;
};

/** How long an API process waits at start for its Redis connection before serving without it. */
const REDIS_READY_WAIT_MS = 5_000;

/** Once the connection is ready, or its first attempt has failed, or `waitMs` has passed. */
function redisReady(redis: Redis, waitMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('error', done);
      resolve();
    };
    const timer = setTimeout(done, waitMs);
    redis.on('ready', done);
    redis.on('error', done);
  });
}

export async function openApiResources(config: Config, options: ApiResourceOptions = {}): Promise<ApiResources> {
  const db = await openDatabase(config);
  const redis = new Redis(config.redis.url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: options.queueUntilRedisConnects ?? false,
  });
  const temporal = await connectTemporal(config, options.tracing?.clientInterceptors);
  // Connecting to Redis runs beside the rest; an API that served before it was up would count its
  // first requests in memory and report its rate limiter degraded for nothing (seen on a loaded
  // machine). A Redis that refuses, or is not up in time, is the limiter's to handle: the API
  // starts degraded.
  await redisReady(redis, REDIS_READY_WAIT_MS);
  const services = buildServices(
    config,
    db,
    temporalFamilyWorkflows({ client: temporal, taskQueue: config.temporal.taskQueue }),
    options.log,
  );
  // Until it listens for key changes, the credential cache stays off (lib/api-keys/credential-cache.ts).
  await services.credentials.listen(config.database.url);
  return {
    config,
    db,
    redis,
    temporal,
    services,
    close: async () => {
      // Counted key uses, and the parts of tus chunks already answered, are written while the
      // database is still open.
      await services.uploadSessions.drained();
      await services.usage.close();
      await services.credentials.close();
      await Promise.allSettled([db.end(), temporal.connection.close(), redis.quit()]);
    },
  };
}

/** What the activities (activities/*) and the outbox dispatcher (lib/events/dispatcher.ts) are built from. */
export type WorkerResources = {
  config: Config;
  db: DatabasePool;
  /** The worker polls through it. */
  connection: NativeConnection;
  /** Shares the worker's connection (see openWorkerResources). */
  temporal: Client;
  objects: ObjectStore;
  keyring: Keyring;
  scanner: Scanner;
  /** The worker's turns at clamd, shared by every scan it runs. */
  scanSlots: Semaphore;
  mailer: Mailer;
  sealKey: Buffer;
  /** After the worker has drained and the dispatcher has stopped: closes every connection. */
  close: () => Promise<void>;
};

export async function openWorkerResources(
  config: Config,
  options: { tracing?: Tracing | null } = {},
): Promise<WorkerResources> {
  // Loaded here, not at the top: the API process imports this module too, and never needs the
  // worker's native runtime.
  const { NativeConnection } = await import('@temporalio/worker');
  const db = await openDatabase(config);
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const mailer = createMailer(config, {
    secure: config.smtp.secure,
    requireTLS: config.smtp.requireTLS,
    ...(config.smtp.auth ? { auth: config.smtp.auth } : {}),
  });
  return {
    config,
    db,
    connection,
    // The dispatcher's client shares the worker's connection, so Temporal can hand the first task
    // of a delivery it starts straight back to this worker (eager start) instead of queueing it.
    temporal: new Client({
      connection,
      namespace: config.temporal.namespace,
      interceptors: options.tracing?.clientInterceptors ?? {},
    }),
    objects: createObjectStore(config.s3),
    keyring: parseKeyring(config.masterKeys.spec, config.masterKeys.currentId),
    scanner: createScanner(config.clamd),
    // clamd scans each INSTREAM on one thread (MaxThreads, 10 by default) and leaves the
    // connections it has no thread for unread. A worker that streamed every scan Temporal handed it
    // at once (twenty 256 MiB uploads, bench/concurrent.ts, on two loaded cores) had every stream go
    // silent for CLAMD_TIMEOUT_MS, fail as clamd unavailable and start over from the first byte:
    // after 9 minutes and 46 failed attempts not one of the twenty was scanned. So a worker streams
    // at most CLAMD_MAX_STREAMS files at once; the others wait their turn before they open anything.
    scanSlots: new Semaphore(config.clamd.maxStreams),
    mailer,
    sealKey: deriveKey(config.secret, 'seal'),
    close: async () => {
      // The webhook attempts' keep-alive sockets would hold the process open.
      closeAgents();
      await Promise.allSettled([db.end(), connection.close(), mailer.close()]);
    },
  };
}

function openDatabase(config: Config): Promise<DatabasePool> {
  return createDatabasePool(config.database.url, config.database.poolSize);
}
