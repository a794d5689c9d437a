import { Redis } from 'ioredis';
import { loadConfig } from '../lib/config.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { buildServices } from '../lib/services.ts';
import { connectTemporal, temporalLifecycles } from '../lib/temporal.ts';
import { defaultHealthProbes } from './health-probes.ts';
import { RateLimiter } from './rate-limiter.ts';
import { createServer } from './server.ts';

const config = loadConfig();
const db = await createDatabasePool(config.database.url, config.database.poolSize);
const redis = new Redis(config.redis.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
const temporal = await connectTemporal(config);
const services = buildServices(config, db, temporalLifecycles(temporal, config.temporal.taskQueue));
const server = await createServer({
  services,
  rateLimiter: new RateLimiter(redis, config.redis.prefix),
  healthProbes: defaultHealthProbes({ config, db, redis, temporal }),
});

server.events.on({ name: 'request', channels: 'app' }, (_request, event) => {
  if (event.tags.includes('error') || event.tags.includes('warn')) {
    process.stderr.write(`api: ${event.tags.join(',')} ${event.error ?? event.data}\n`);
  }
});

await server.start();
process.stderr.write(`api: listening on ${server.info.uri}\n`);

const shutdown = async () => {
  await server.stop({ timeout: 10_000 });
  await services.usage.close();
  await Promise.allSettled([db.end(), temporal.connection.close(), redis.quit()]);
  process.exit(0);
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
