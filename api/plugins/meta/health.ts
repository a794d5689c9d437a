import { healthReport, runProbes } from '../../health.ts';
import { defineRoute } from '../../route.ts';

export const healthRoute = defineRoute({
  method: 'GET',
  path: '/v1/health',
  options: {
    id: 'meta.health',
    plugins: {
      valise: { openapi: { statuses: { 503: 'A component the service needs is down; the body is the same report.' } } },
    },
    auth: false,
    description: 'Health of each component',
    notes:
      '200 while the service can serve, 503 when a component it needs is down. Components: database, redis, temporal, object_storage, clamd, smtp, and rate_limiter. Without Redis the service still serves: `redis` is `down`, `rate_limiter` is `degraded` with `store: "memory"` (each API process counts on its own), `status` is `degraded`, and the answer stays 200. A component that fails is `down` with `error: "not answering"`; the cause is logged with the request id, never returned.',
    tags: ['api', 'meta'],
  },
  handler: async (request, h) => {
    const { healthProbes, rateLimiter } = request.server.app;
    const probed = await runProbes(healthProbes, (component, error) =>
      request.log(
        ['error', 'health'],
        `${request.app.requestId} health: ${component} is down: ${(error as Error)?.stack ?? String(error)}`,
      ),
    );
    const { serving, ...report } = healthReport(
      { ...probed.components, rate_limiter: rateLimiter.status() },
      probed.serving,
    );
    return h.response(report).code(serving ? 200 : 503);
  },
});
