import Joi from 'joi';
import { type AnalyticsQuery, analyticsFunnel } from '../../../lib/analytics/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { funnel, windowQuery } from './schemas.ts';

export const analyticsFunnelRoute = defineRoute({
  method: 'GET',
  path: '/v1/analytics/funnel',
  options: {
    id: 'analytics.funnel',
    description: 'The transfer funnel',
    notes:
      'Transfers created in the window: uploaded, downloaded once, every file downloaded. `since` inclusive, `until` exclusive (default the last 30 days, at most 366); only the calling environment.',
    tags: ['api', 'analytics'],
    plugins: { valise: { scope: 'analytics:read', rateClass: 'expensive' } },
    validate: { query: Joi.object<AnalyticsQuery>({ ...windowQuery }) },
    response: { schema: funnel },
  },
  handler: (request) => analyticsFunnel(request.server.app.services, callerOf(request), request.query),
});
