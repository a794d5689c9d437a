import type { ServerRoute } from '@hapi/hapi';
import { runProbes } from '../../health.ts';

export const healthRoute: ServerRoute = {
  method: 'GET',
  path: '/v1/health',
  options: {
    auth: false,
    description: 'Health of each component',
    notes:
      '200 when every component answers, 503 otherwise. Components: database, redis, temporal, object_storage, clamd, smtp. A component that fails is `down` with `error: "not answering"`; the cause is logged with the request id, never returned.',
    tags: ['api', 'meta'],
  },
  handler: async (request, h) => {
    const report = await runProbes(request.server.app.healthProbes, (component, error) =>
      request.log(
        ['error', 'health'],
        `${request.app.requestId} health: ${component} is down: ${(error as Error)?.stack ?? String(error)}`,
      ),
    );
    return h.response(report).code(report.status === 'ok' ? 200 : 503);
  },
};
