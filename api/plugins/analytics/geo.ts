import Joi from 'joi';
import { type AnalyticsQuery, analyticsGeo } from '../../../lib/analytics/service.ts';
import { defineRoute } from '../../route.ts';
import { callerOf } from '../../types.ts';
import { geo, windowQuery } from './schemas.ts';

export const analyticsGeoRoute = defineRoute({
  method: 'GET',
  path: '/v1/analytics/geo',
  options: {
    id: 'analytics.geo',
    description: 'Downloads and visitors by country',
    notes:
      'Countries from the offline lookup (ISO 3166-1 alpha-2), null when unknown. `since` inclusive, `until` exclusive (default the last 30 days, at most 366); only the calling environment.',
    tags: ['api', 'analytics'],
    plugins: { valise: { scope: 'analytics:read', rateClass: 'expensive' } },
    validate: { query: Joi.object<AnalyticsQuery>({ ...windowQuery }) },
    response: { schema: geo },
  },
  handler: (request) => analyticsGeo(request.server.app.services, callerOf(request), request.query),
});
