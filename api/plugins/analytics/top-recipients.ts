import Joi from 'joi';
import { analyticsTopRecipients, type TopQuery } from '../../../lib/analytics/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { topLimit, topRecipients, windowQuery } from './schemas.ts';

export const analyticsTopRecipientsRoute = defineRoute({
  method: 'GET',
  path: '/v1/analytics/top-recipients',
  options: {
    id: 'analytics.topRecipients',
    description: 'The recipients who downloaded most',
    notes:
      'Recipients of transfers created in the window, by downloads their personal links completed; `limit` clamped to 1 to 100. `since` inclusive, `until` exclusive (default the last 30 days, at most 366); only the calling environment.',
    tags: ['api', 'analytics'],
    plugins: { valise: { scope: 'analytics:read', rateClass: 'expensive' } },
    validate: { query: Joi.object<TopQuery>({ ...windowQuery, limit: topLimit }) },
    response: { schema: topRecipients },
  },
  handler: (request) => analyticsTopRecipients(request.server.app.services, callerOf(request), request.query),
});
