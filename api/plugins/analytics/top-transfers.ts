import Joi from 'joi';
import { analyticsTopTransfers, type TopQuery } from '../../../lib/analytics/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { topLimit, topTransfers, windowQuery } from './schemas.ts';

export const analyticsTopTransfersRoute = defineRoute({
  method: 'GET',
  path: '/v1/analytics/top-transfers',
  options: {
    id: 'analytics.topTransfers',
    description: 'The most downloaded transfers',
    notes:
      'By downloads in the window; `limit` clamped to 1 to 100. `since` inclusive, `until` exclusive (default the last 30 days, at most 366); only the calling environment.',
    tags: ['api', 'analytics'],
    plugins: { valise: { scope: 'analytics:read', rateClass: 'expensive' } },
    validate: { query: Joi.object<TopQuery>({ ...windowQuery, limit: topLimit }) },
    response: { schema: topTransfers },
  },
  handler: (request) => analyticsTopTransfers(request.server.app.services, callerOf(request), request.query),
});
