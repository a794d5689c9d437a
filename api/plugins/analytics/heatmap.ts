import Joi from 'joi';
import { type AnalyticsQuery, analyticsHeatmap } from '../../../lib/analytics/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { heatmap, windowQuery } from './schemas.ts';

export const analyticsHeatmapRoute = defineRoute({
  method: 'GET',
  path: '/v1/analytics/heatmap',
  options: {
    id: 'analytics.heatmap',
    description: 'Downloads by weekday and hour',
    notes:
      'ISO weekday (1 Monday) and hour local to `tz`; cells without downloads left out. `since` inclusive, `until` exclusive (default the last 30 days, at most 366); only the calling environment.',
    tags: ['api', 'analytics'],
    plugins: { valise: { scope: 'analytics:read', rateClass: 'expensive' } },
    validate: { query: Joi.object<AnalyticsQuery>({ ...windowQuery }) },
    response: { schema: heatmap },
  },
  handler: (request) => analyticsHeatmap(request.server.app.services, callerOf(request), request.query),
});
