import { z } from 'zod';
import { EMITTED, event } from './define.ts';

// webhook.* and ping: what Valise records about delivering events itself.

export const WEBHOOK_EVENTS = {
  'webhook.disabled': event(
    'A webhook failed every delivery attempt for `WEBHOOK_DISABLE_AFTER` (3 days by default) and was turned off ' +
      '(`is_active` false). Sent to the workspace other webhooks subscribed to it; re-enable with `PATCH /v1/webhooks`.',
    {
      webhook: z
        .object({
          id: z.uuid().describe('The webhook id.'),
          url: z.string().describe('Its URL.'),
          failure_count: z.int().min(0).describe('Failed attempts so far.'),
          last_status: z.int().nullable().describe('The HTTP status of the last attempt; null when it got no answer.'),
        })
        .describe('The disabled webhook.'),
      reason: z.enum(['failing']).describe('Always `failing`.'),
      failing_since: z.iso.datetime().describe('When its current run of failures began.'),
    },
    EMITTED,
  ),
  ping: event(
    'A test delivery (`POST /v1/webhooks/{id}/test`), sent to that one webhook whatever it subscribes to; ' +
      'carries no business data.',
    {
      webhook_id: z.uuid().describe('The webhook the test was sent to.'),
      message: z.string().describe('A fixed greeting.'),
    },
    EMITTED,
  ),
};
