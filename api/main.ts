import { openApiResources } from '../lib/composition.ts';
import { loadConfig } from '../lib/config.ts';
import { defaultHealthProbes } from './health-probes.ts';
import { RateLimiter } from './rate-limiter.ts';
import { createServer } from './server.ts';

const config = loadConfig();
const resources = await openApiResources(config);
const server = await createServer({
  services: resources.services,
  rateLimiter: new RateLimiter(resources.redis, config.redis.prefix),
  healthProbes: defaultHealthProbes(resources),
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
  await resources.close();
  process.exit(0);
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
