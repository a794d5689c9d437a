import Joi from 'joi';
import {
  listProcessorEvents,
  PROCESSOR_EVENTS_DEFAULT_LIMIT,
  PROCESSOR_EVENTS_MAX_LIMIT,
  type ProcessorEventsQuery,
} from '../../../lib/billing/service.ts';
import { defineRoute } from '../../route.ts';
import { timestamp } from '../../schemas.ts';
import { callerOf } from '../../types.ts';
import { processorEventList } from './schemas.ts';

export const processorEventsRoute = defineRoute({
  method: 'GET',
  path: '/v1/billing/processor-events',
  options: {
    id: 'billing.processorEvents',
    description: 'List payment-processor events',
    notes: `The payment processor's events recorded for the caller's workspace, newest first by \`processed_at\`. \`limit\` is clamped into 1..${PROCESSOR_EVENTS_MAX_LIMIT} (default ${PROCESSOR_EVENTS_DEFAULT_LIMIT}); \`event_type\` matches exactly; \`since\` keeps events processed at or after it; \`raw\` is included only for \`include_raw=true\`. \`counts_by_type\` counts the returned batch; \`filter\` echoes what was applied.`,
    tags: ['api', 'billing'],
    plugins: { valise: { scope: 'billing:read', rateClass: 'expensive' } },
    validate: {
      query: Joi.object<ProcessorEventsQuery>({
        limit: Joi.number()
          .integer()
          .unsafe()
          .default(PROCESSOR_EVENTS_DEFAULT_LIMIT)
          .custom((value: number) => Math.min(PROCESSOR_EVENTS_MAX_LIMIT, Math.max(1, value))),
        event_type: Joi.string().min(1).max(255),
        since: timestamp,
        include_raw: Joi.string().max(16).description('Only the value `true` includes `raw`; any other is off.'),
      }),
    },
    response: { schema: processorEventList },
  },
  handler: (request) => listProcessorEvents(request.server.app.services, callerOf(request), request.query),
});
