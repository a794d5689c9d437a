import { proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { AttemptOutcome, createWebhookActivities } from '../activities/webhooks.ts';
import type { DeliveryTrigger } from '../lib/vocabulary.ts';
import { STORAGE_RETRY } from './retry-policies.ts';
import { msUntil } from './waiting.ts';

type Activities = ReturnType<typeof createWebhookActivities>;

// An attempt's HTTP failure is its return value; what Temporal retries here is
// the activity failing to run or record (database down, worker gone). The
// timeout covers WEBHOOK_TIMEOUT_MS (at most 30 s) plus the database writes.
// A local activity: an attempt is short and its workflow's worker runs it, so
// it needs no activity task of its own, which halves what Temporal stores and
// dispatches per delivery (bench/README.md has the figures). If the worker dies
// mid-attempt, the workflow task times out and the attempt runs again on another.
const { attemptDelivery } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: STORAGE_RETRY,
});

export type DeliverWebhookInput = {
  eventId: string;
  webhookId: string;
  /** `scheduled` follows the retry schedule; `manual` and `test` make one attempt. */
  trigger: DeliveryTrigger;
  /** Waits between attempts in ms (WEBHOOK_RETRY_SCHEDULE), fixed when the delivery starts. */
  retryScheduleMs: readonly number[];
  /**
   * Takes over a delivery whose first `index` attempts the sender made (lib/webhooks/sender.ts):
   * waits until `at` (ISO), the `next_retry_at` recorded with the last of them, then goes on from
   * attempt `index`. Absent, the workflow makes every attempt itself (test pings, redeliveries, and
   * the deliveries started before the sender existed).
   */
  resume?: { index: number; at: string };
};

/** `deliverWebhook` on the retry schedule: exactly one per (event, webhook). */
export const deliveryWorkflowId = (eventId: string, webhookId: string) => `webhook-delivery-${eventId}-${webhookId}`;

/**
 * `deliverWebhook` for one asked-for attempt (a test ping or a redelivery):
 * each request is its own run, told apart by `nonce` (a random UUID).
 */
export const oneAttemptDeliveryWorkflowId = (
  trigger: Exclude<DeliveryTrigger, 'scheduled'>,
  webhookId: string,
  nonce: string,
) => `webhook-${trigger}-${webhookId}-${nonce}`;

/**
 * Delivers one event to one webhook (workflow id
 * `webhook-delivery-<event>-<webhook>`): an attempt, then on failure a wait
 * from the schedule with ±20 % jitter, and again, until a 2xx or the schedule
 * runs out. The waits are durable timers, so restarts lose nothing. The
 * sender makes a delivery's first attempt and starts this workflow, with
 * `resume`, only when that attempt failed.
 */
export async function deliverWebhook(input: DeliverWebhookInput): Promise<AttemptOutcome> {
  const waits = input.trigger === 'scheduled' ? input.retryScheduleMs : [];
  if (input.resume) await sleep(msUntil(Date.parse(input.resume.at)));
  for (let index = input.resume?.index ?? 0; ; index++) {
    const wait = waits[index];
    // Math.random is seeded per workflow run by Temporal, so replays draw the same jitter.
    const retryInMs = wait === undefined ? null : Math.round(wait * (0.8 + 0.4 * Math.random()));
    const result = await attemptDelivery({
      eventId: input.eventId,
      webhookId: input.webhookId,
      trigger: input.trigger,
      index,
      retryInMs,
    });
    if (result.outcome !== 'failed' || retryInMs === null) return result;
    await sleep(retryInMs);
  }
}
