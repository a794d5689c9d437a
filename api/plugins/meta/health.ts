import type { ServerRoute } from '@hapi/hapi';
import { runProbes } from '../../health.ts';

export const healthRoute: ServerRoute = {
  method: 'GET',
  path: '/v1/health',
  options: {
    auth: false,
    description: 'Health of each component',
    notes:
      '200 when every component answers, 503 otherwise. Components: database, redis, temporal, object_storage, clamd, smtp.',
    tags: ['api', 'meta'],
  },
  handler: async (request, h) => {
    const report = await runProbes(request.server.app.healthProbes);
    return h.response(report).code(report.status === 'ok' ? 200 : 503);
  },
};
