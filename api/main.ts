import { openApiResources } from '../lib/composition.ts';
import { loadConfig } from '../lib/config.ts';
import { createLogger } from '../lib/observability/logging.ts';
import { serveMetrics } from '../lib/observability/metrics.ts';
import { startTracing } from '../lib/observability/tracing.ts';
import { defaultHealthProbes } from './health-probes.ts';
import { observeRequests } from './observability.ts';
import { RateLimiter } from './rate-limiter.ts';
import { createServer } from './server.ts';

const config = loadConfig();
const logger = await createLogger(config, 'api');
const log = (message: string) => logger.warn(message);
// Before the Temporal client is made: its interceptors trace into this provider.
const tracing = await startTracing(config, 'valise-api');
const resources = await openApiResources(config, { tracing, log });
const server = await createServer({
  services: resources.services,
  rateLimiter: new RateLimiter(resources.redis, config.redis.prefix, log),
  healthProbes: defaultHealthProbes(resources),
});
await observeRequests(server, { logger, tracing });
const metrics = await serveMetrics(config.observability.apiMetrics, { log });

await server.start();
logger.info({ url: server.info.uri, metrics: metrics?.url }, `listening on ${server.info.uri}`);

const shutdown = async () => {
  await server.stop({ timeout: 10_000 });
  await resources.close();
  await metrics?.close();
  await tracing?.shutdown();
  logger.flush();
  process.exit(0);
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
