import { createDeliveryQueries } from '../db/queries/deliveries.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { createWebhookQueries } from '../db/queries/webhooks.ts';
import { notFound } from '../errors.ts';
import type { PageQuery } from '../pagination.ts';
import type { Services } from '../services.ts';
import { type Caller, tenantOf } from '../tenancy.ts';
import { type AttemptOutcome, presentAttempt, type WebhookAttempt } from './attempts.ts';

export const PING_MESSAGE = 'Hello from Valise: this webhook is reachable and its signatures verify.';

async function mustFindWebhook(services: Services, caller: Caller, id: string) {
  const hook = await createWebhookQueries(services.db).find(tenantOf(caller), id);
  if (!hook) throw notFound('webhook');
  return hook;
}

export type AttemptQuery = PageQuery & { event_id?: string | undefined; delivery_id?: string | undefined };

export async function listAttempts(services: Services, caller: Caller, webhookId: string, query: AttemptQuery) {
  await mustFindWebhook(services, caller, webhookId);
  const filters = { webhook: webhookId, event_id: query.event_id, delivery_id: query.delivery_id };
  const window = services.paginator.open('webhook_deliveries', filters, query);
  const rows = await createDeliveryQueries(services.db).listAttempts(
    webhookId,
    { eventId: query.event_id, deliveryId: query.delivery_id },
    window,
  );
  return services.paginator.close('webhook_deliveries', filters, query, rows, presentAttempt);
}

function attemptOf(result: AttemptOutcome): WebhookAttempt {
  if (result.outcome === 'skipped') {
    // The webhook or event vanished between our check and the attempt (a concurrent delete).
    throw notFound(result.reason === 'event_deleted' ? 'event' : 'webhook');
  }
  return result.attempt;
}

/** Sends a signed `ping` to this webhook alone, whatever it subscribes to, and returns the attempt. */
export async function sendTestPing(services: Services, caller: Caller, webhookId: string) {
  const hook = await mustFindWebhook(services, caller, webhookId);
  const event = await createEventQueries(services.db).record(
    tenantOf(caller),
    'ping',
    { webhook_id: hook.id, message: PING_MESSAGE },
    { dispatched: true },
  );
  return attemptOf(
    await services.workflows.webhooks.deliverNow(tenantOf(caller), {
      eventId: event.id,
      webhookId: hook.id,
      trigger: 'test',
    }),
  );
}

/** Sends a past delivery's event again, now, as one more attempt of that delivery (same `webhook-id`). */
export async function redeliver(services: Services, caller: Caller, webhookId: string, deliveryId: string) {
  const hook = await mustFindWebhook(services, caller, webhookId);
  const delivery = await createDeliveryQueries(services.db).find(hook.id, deliveryId);
  if (!delivery) throw notFound('delivery');
  return attemptOf(
    await services.workflows.webhooks.deliverNow(tenantOf(caller), {
      eventId: delivery.event_id,
      webhookId: hook.id,
      trigger: 'manual',
    }),
  );
}
