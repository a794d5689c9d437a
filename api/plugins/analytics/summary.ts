import Joi from 'joi';
import { type AnalyticsQuery, analyticsSummary } from '../../../lib/analytics/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { summary, windowQuery } from './schemas.ts';

export const analyticsSummaryRoute = defineRoute({
  method: 'GET',
  path: '/v1/analytics',
  options: {
    id: 'analytics.summary',
    description: 'Totals and days over a window',
    notes:
      'Transfers created, bytes sent, downloads, unique recipients, completion rate, median time to first download, and each day in `tz`. `since` inclusive, `until` exclusive (default the last 30 days, at most 366); only the calling environment.',
    tags: ['api', 'analytics'],
    plugins: { valise: { scope: 'analytics:read', rateClass: 'expensive' } },
    validate: { query: Joi.object<AnalyticsQuery>({ ...windowQuery }) },
    response: { schema: summary },
  },
  handler: (request) => analyticsSummary(request.server.app.services, callerOf(request), request.query),
});
