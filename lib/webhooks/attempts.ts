import type { AttemptRow } from '../db/queries/deliveries.ts';
import type { Tenant } from '../tenancy.ts';
import type { DeliveryTrigger } from '../vocabulary.ts';

// What the delivery activity (activities/webhooks.ts), the API's test pings and redeliveries
// (lib/webhooks/deliveries.ts) and the Temporal client (lib/webhooks/temporal.ts) say to each other about
// one attempt. It imports none of them, so none of them imports another through it.

/** One HTTP attempt, as GET /v1/webhooks/{id}/deliveries lists it (docs/webhooks.md, "Delivery log"). */
export function presentAttempt(row: AttemptRow) {
  return {
    id: row.id,
    object: 'webhook_delivery_attempt' as const,
    delivery_id: row.delivery_id,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: row.attempt,
    trigger: row.trigger,
    url: row.url,
    succeeded: row.succeeded,
    status_code: row.status_code,
    duration_ms: row.duration_ms,
    error: row.error,
    response_body: row.response_body,
    next_retry_at: row.next_retry_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}
export type WebhookAttempt = ReturnType<typeof presentAttempt>;

/** What the attempt activity returns: a failed attempt is a value; a skipped one was never sent. */
export type AttemptOutcome =
  | { outcome: 'succeeded' | 'failed'; attempt: WebhookAttempt }
  | { outcome: 'skipped'; reason: 'webhook_deleted' | 'webhook_disabled' | 'event_deleted' };

/** Runs one attempt on the workers and waits for it (lib/webhooks/temporal.ts). */
export type WebhookDeliverer = {
  deliverNow(
    tenant: Tenant,
    input: {
      eventId: string;
      webhookId: string;
      trigger: Exclude<DeliveryTrigger, 'scheduled'>;
    },
  ): Promise<AttemptOutcome>;
};

// services.workflows.webhooks (lib/services.ts), built by lib/webhooks/temporal.ts.
declare module '../services.ts' {
  interface FamilyWorkflows {
    /** Runs one webhook delivery attempt now, on the workers. */
    webhooks: WebhookDeliverer;
  }
}
