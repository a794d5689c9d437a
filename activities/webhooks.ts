import { ApplicationFailure, Context } from '@temporalio/activity';
import type { DatabasePool } from 'slonik';
import type { Config } from '../lib/config.ts';
import { type AttemptRow, createDeliveryQueries } from '../lib/db/queries/deliveries.ts';
import { createEventQueries } from '../lib/db/queries/events.ts';
import { createWebhookQueries } from '../lib/db/queries/webhooks.ts';
import type { Lookup } from '../lib/net/ssrf.ts';
import { countWebhookAttempt } from '../lib/observability/metrics.ts';
import type { DeliveryTrigger } from '../lib/vocabulary.ts';
import { type AttemptOutcome, presentAttempt } from '../lib/webhooks/attempts.ts';
import { recordWebhookDisabled } from '../lib/webhooks/disabled.ts';
import { envelopeOf, signingSecrets } from '../lib/webhooks/outgoing.ts';
import { postJson } from '../lib/webhooks/post.ts';
import { deliveryHeaders } from '../lib/webhooks/signature.ts';

export type WebhookActivityDeps = {
  config: Config;
  db: DatabasePool;
  sealKey: Buffer;
  /** Tests inject a resolver; production resolves with the system's. */
  lookup?: Lookup;
};

export type AttemptInput = {
  eventId: string;
  webhookId: string;
  trigger: DeliveryTrigger;
  /** Position of this attempt in its workflow: with the workflow id, the attempt's identity. */
  index: number;
  /** The wait before the next try if this one fails; null when it is the last. */
  retryInMs: number | null;
};

// The workflow reads the activity's result type here, with the activity.
export type { AttemptOutcome };

export function createWebhookActivities(deps: WebhookActivityDeps) {
  const { config, db } = deps;

  /**
   * One HTTP attempt of one delivery, recorded with its outcome. A failed
   * attempt is a value, not an exception: the workflow decides when to try
   * again. Exceptions are for the database or the worker, and Temporal retries
   * those; an attempt already recorded under the same key is returned as is,
   * so a retried activity never records (or counts) twice.
   */
  async function attemptDelivery(input: AttemptInput): Promise<AttemptOutcome> {
    const workflow = Context.current().info.workflowExecution;
    if (!workflow) throw ApplicationFailure.nonRetryable('attemptDelivery runs inside a delivery workflow');
    const attemptKey = `${workflow.workflowId}:${input.index}`;
    const deliveries = createDeliveryQueries(db);
    const recorded = await deliveries.findAttemptByKey(attemptKey);
    if (recorded) return outcomeOf(recorded);

    const hook = await createWebhookQueries(db).findById(input.webhookId);
    if (!hook) return { outcome: 'skipped', reason: 'webhook_deleted' };
    const event = await createEventQueries(db).find(input.eventId);
    if (!event) return { outcome: 'skipped', reason: 'event_deleted' };
    if (input.trigger === 'scheduled' && !hook.is_active) {
      await db.transaction(async (tx) => {
        const delivery = await createDeliveryQueries(tx).openForUpdate(hook.id, event.id, event.type);
        await createDeliveryQueries(tx).cancel(delivery.id);
      });
      return { outcome: 'skipped', reason: 'webhook_disabled' };
    }

    const now = new Date();
    const body = envelopeOf(event);
    const headers = await deliveryHeaders({
      id: event.id,
      timestamp: Math.floor(now.getTime() / 1000),
      payload: body,
      secrets: signingSecrets(hook, deps.sealKey, now),
    });
    const result = await postJson({
      url: hook.url,
      body,
      headers: { ...headers },
      timeoutMs: config.webhooks.timeoutMs,
      allowPrivate: config.webhooks.allowPrivateTargets,
      userAgent: config.webhooks.userAgent,
      hosts: config.webhooks.hosts,
      ...(deps.lookup ? { lookup: deps.lookup } : {}),
    });
    countWebhookAttempt(input.trigger, result);
    const nextRetryAt = !result.ok && input.retryInMs !== null ? new Date(Date.now() + input.retryInMs) : null;

    const attempt = await db.transaction(async (tx) => {
      const queries = createDeliveryQueries(tx);
      const delivery = await queries.openForUpdate(hook.id, event.id, event.type);
      // Holding the delivery's lock: a twin of this activity that got here first has recorded it.
      const twin = await queries.findAttemptByKey(attemptKey);
      if (twin) return twin;
      const row = await queries.recordAttempt(delivery, {
        attemptKey,
        trigger: input.trigger,
        url: hook.url,
        statusCode: result.statusCode,
        succeeded: result.ok,
        durationMs: result.durationMs,
        error: result.error,
        responseBody: result.responseBody,
        nextRetryAt,
      });
      const hooks = createWebhookQueries(tx);
      await hooks.recordOutcome(hook.id, { succeeded: result.ok, statusCode: result.statusCode });
      // Only the schedule's own failures count towards disabling: a failed test is a question, not a verdict.
      if (!result.ok && input.trigger === 'scheduled') {
        const disabled = await hooks.disableIfFailingFor(hook.id, config.webhooks.disableAfterMs);
        if (disabled) {
          await queries.cancel(delivery.id);
          await recordWebhookDisabled(tx, disabled);
        }
      }
      return row;
    });
    return outcomeOf(attempt);
  }

  return { attemptDelivery };
}

function outcomeOf(row: AttemptRow): AttemptOutcome {
  return { outcome: row.succeeded ? 'succeeded' : 'failed', attempt: presentAttempt(row) };
}
