import type { Client } from '@temporalio/client';
import pg from 'pg';
import type { DatabasePool } from 'slonik';
import { deliverWebhook, deliveryWorkflowId } from '../../workflows/deliverWebhook.ts';
import type { Config } from '../config.ts';
import { createDeliveryQueries, type FirstAttemptRecord, type LeasedDelivery } from '../db/queries/deliveries.ts';
import { createWebhookQueries } from '../db/queries/webhooks.ts';
import { inParallel, pause, Semaphore } from '../in-parallel.ts';
import type { Lookup } from '../net/ssrf.ts';
import { countWebhookAttempt } from '../observability/metrics.ts';
import { startedOnce } from '../temporal.ts';
import { workflowLabels } from '../temporal-search-attributes.ts';
import type { Tenant } from '../tenancy.ts';
import { recordWebhookDisabled } from './disabled.ts';
import { envelopeOf, signingSecrets } from './outgoing.ts';
import { type PostResult, postJson } from './post.ts';
import { deliveryHeaders } from './signature.ts';

// The first attempt of every scheduled delivery, without a workflow each
// (docs/webhooks.md, "Delivery"). The dispatcher queues deliveries in the
// transaction that stamps their events dispatched, those this sender has room
// for already leased to it (`reserve`, `adopt`); this loop, in the worker
// process, leases the other due ones (FOR NO KEY UPDATE SKIP LOCKED, so several
// senders share the queue), holds up to `hold` at a time, POSTs up to
// `concurrency` of them at once, and records what came
// back in batches: attempt rows, delivery states, the webhooks' counters and
// the disabling rule, one transaction per batch. A delivery whose first attempt
// failed is then handed to a deliverWebhook workflow (its id derived from the
// pair, REJECT_DUPLICATE) that waits out the schedule and makes the retries;
// only once it is started does the delivery leave the queue. So Temporal sees
// failing deliveries only.
//
// Nothing is lost when the process dies: a delivery stays on the queue until
// its attempt is recorded (and, if it failed, its workflow started), and a
// lease that runs out makes it due again for any sender. What a dead sender
// had POSTed but not yet recorded is POSTed again, with the same webhook-id: at
// most `hold` deliveries, the leases it held. Its attempt key
// (`<workflow id>:0`, as the workflow would have named it) is recorded once.

export type SenderOptions = {
  db: DatabasePool;
  databaseUrl: string;
  temporal: Client;
  taskQueue: string;
  webhooks: Config['webhooks'];
  sealKey: Buffer;
  /** POSTs in flight at most. */
  concurrency?: number;
  /**
   * Deliveries leased and not yet recorded, at most: a multiple of `concurrency`, so POSTs go on
   * while a batch is being recorded. The most a killed sender can have sent without recording.
   */
  hold?: number;
  /** The queue is read this often without a wake-up: for leases that ran out and lost NOTIFYs. */
  pollMs?: number;
  lookup?: Lookup;
  log?: (message: string) => void;
};

export type Sender = {
  /** Due deliveries were queued: lease what is due. */
  wake(): void;
  /** How long this sender's leases last. */
  readonly leaseMs: number;
  /**
   * Room for up to `wanted` deliveries a caller is about to lease for this sender in its own
   * transaction (the dispatcher, as it queues them): counted as held from now, so the sender never
   * holds more than `hold`. Returns how many it may lease; `adopt` settles the reservation.
   */
  reserve(wanted: number): number;
  /**
   * Takes the deliveries leased under a reservation of `reserved`, once their transaction has
   * committed, and frees the rest of the reservation (all of it when the transaction failed).
   */
  adopt(leased: readonly LeasedDelivery[], reserved: number): void;
  /** Leases nothing more, records what is in flight, then stops. */
  stop(): Promise<void>;
};

export const SENDER_CONCURRENCY = 128;
export const SENDER_HOLD = 4 * SENDER_CONCURRENCY;
// Records per transaction at most; a batch is whatever finished while the previous one committed.
const RECORD_BATCH = 500;
const HAND_OVER_CONCURRENCY = 16;

/**
 * How long a sender holds a delivery: the deadlines of the POSTs that may be ahead of it (hold /
 * concurrency rounds), its own, then ample time to record it.
 */
export const senderLeaseMs = (timeoutMs: number, rounds = SENDER_HOLD / SENDER_CONCURRENCY) =>
  rounds * timeoutMs + 15_000;

export function startSender(options: SenderOptions): Sender {
  const { db, webhooks } = options;
  const concurrency = options.concurrency ?? SENDER_CONCURRENCY;
  const limit = Math.max(options.hold ?? SENDER_HOLD, concurrency);
  const pollMs = options.pollMs ?? 1_000;
  const leaseMs = senderLeaseMs(webhooks.timeoutMs, Math.ceil(limit / concurrency));
  const posting = new Semaphore(concurrency);
  const log = options.log ?? ((message) => process.stderr.write(`sender: ${message}\n`));
  const deliveries = createDeliveryQueries(db);

  let stopping = false;
  // Leased deliveries this process has not finished with (recorded, handed over or dropped).
  let held = 0;
  let wanted = true;
  let leasing = false;
  const answered: (FirstAttemptRecord & { eventId: string; tenant: Tenant })[] = [];
  let recording = false;
  let drained: (() => void) | null = null;

  const release = (count: number) => {
    held -= count;
    if (held === 0) drained?.();
    if (count > 0) void lease();
  };

  async function lease(): Promise<void> {
    if (leasing || stopping) return;
    leasing = true;
    try {
      while (wanted && !stopping && held < limit) {
        wanted = false;
        const room = limit - held;
        // Counted as held while the statement runs, so that the dispatcher's reservation meanwhile
        // (`reserve`) cannot take the same room twice.
        held += room;
        let leased: LeasedDelivery[] = [];
        try {
          leased = await deliveries.leaseDue(room, leaseMs);
        } finally {
          release(room - leased.length);
        }
        if (leased.length === room) wanted = true;
        take(leased);
      }
    } catch (error) {
      log(`lease failed, retrying: ${(error as Error).message}`);
      wanted = true;
      setTimeout(() => void lease(), 1_000).unref();
    } finally {
      leasing = false;
    }
  }

  function take(leased: readonly LeasedDelivery[]) {
    const finished = leased.filter((row) => row.status !== 'pending');
    const attempted = leased.filter((row) => row.status === 'pending' && row.attempted);
    const inactive = leased.filter((row) => row.status === 'pending' && !row.attempted && !row.webhook.is_active);
    for (const row of leased) {
      if (row.status === 'pending' && !row.attempted && row.webhook.is_active) void send(row);
    }
    // A redelivery ended it, or a disabled webhook cancelled it, after it was queued.
    if (finished.length > 0) void settle(finished.length, () => deliveries.leaveQueue(finished.map(idOf)));
    // Its webhook was turned off before the first attempt: as the workflow's attempt would, cancel it.
    if (inactive.length > 0) {
      void settle(inactive.length, async () => {
        for (const row of inactive) await deliveries.cancel(row.delivery_id);
      });
    }
    // Attempted and failed, but its sender died before handing it over.
    if (attempted.length > 0) {
      void handOver(
        attempted.map((row) => ({
          deliveryId: row.delivery_id,
          eventId: row.event.id,
          webhookId: row.webhook.id,
          tenant: tenantOfEvent(row.event),
          retryAt: row.next_attempt_at ?? new Date(),
        })),
      );
    }
  }

  /** Runs a bookkeeping step for `count` leased deliveries; on failure their leases run out and they come back. */
  async function settle(count: number, step: () => Promise<unknown>) {
    try {
      await step();
    } catch (error) {
      log(`bookkeeping failed, the deliveries return when their lease ends: ${(error as Error).message}`);
    } finally {
      release(count);
    }
  }

  /** Signs at the moment of sending, so the timestamp is the attempt's; an HTTP failure is a result. */
  async function post(row: LeasedDelivery): Promise<PostResult> {
    const now = new Date();
    const body = envelopeOf(row.event);
    const headers = await deliveryHeaders({
      id: row.event.id,
      timestamp: Math.floor(now.getTime() / 1000),
      payload: body,
      secrets: signingSecrets(row.webhook, options.sealKey, now),
    });
    return postJson({
      url: row.webhook.url,
      body,
      headers: { ...headers },
      timeoutMs: webhooks.timeoutMs,
      allowPrivate: webhooks.allowPrivateTargets,
      userAgent: webhooks.userAgent,
      hosts: webhooks.hosts,
      ...(options.lookup ? { lookup: options.lookup } : {}),
    }).catch(
      (error: Error): PostResult => ({
        ok: false,
        statusCode: null,
        durationMs: 0,
        error: `network_error: ${error.message}`,
        responseBody: null,
      }),
    );
  }

  async function send(row: LeasedDelivery) {
    try {
      const result = await posting.run(() => post(row));
      countWebhookAttempt('scheduled', result);
      const at = new Date();
      const wait = webhooks.retryScheduleMs[0];
      // The same ±20 % as the workflow's waits (workflows/deliverWebhook.ts).
      const retryInMs = wait === undefined ? null : Math.round(wait * (0.8 + 0.4 * Math.random()));
      answered.push({
        deliveryId: row.delivery_id,
        webhookId: row.webhook.id,
        eventId: row.event.id,
        tenant: tenantOfEvent(row.event),
        attemptKey: `${deliveryWorkflowId(row.event.id, row.webhook.id)}:0`,
        url: row.webhook.url,
        statusCode: result.statusCode,
        succeeded: result.ok,
        durationMs: result.durationMs,
        error: result.error,
        responseBody: result.responseBody,
        nextRetryAt: !result.ok && retryInMs !== null ? new Date(at.getTime() + retryInMs) : null,
        at,
      });
      if (!recording) {
        recording = true;
        void record();
      }
    } catch (error) {
      // Not an HTTP failure (those are results): a secret that cannot be unsealed, say. Said, and retried.
      log(`delivery ${row.delivery_id} not sent: ${(error as Error).message}`);
      release(1);
    }
  }

  /** Records what has come back, a batch per transaction, until nothing is waiting. */
  async function record() {
    while (answered.length > 0) {
      const batch = answered.splice(0, RECORD_BATCH);
      let retries: typeof batch;
      try {
        retries = await db.transaction(async (tx) => {
          const recorded = new Set((await createDeliveryQueries(tx).recordFirstAttempts(batch)).map(keyOf));
          const fresh = batch.filter((attempt) => recorded.has(attempt.attemptKey));
          const hooks = createWebhookQueries(tx);
          await hooks.recordOutcomes(fresh);
          const cancelled = new Set<string>();
          for (const webhookId of new Set(fresh.filter((a) => !a.succeeded).map((a) => a.webhookId))) {
            const disabled = await hooks.disableIfFailingFor(webhookId, webhooks.disableAfterMs);
            if (!disabled) continue;
            for (const attempt of fresh) {
              if (attempt.webhookId !== webhookId || attempt.succeeded) continue;
              await createDeliveryQueries(tx).cancel(attempt.deliveryId);
              cancelled.add(attempt.deliveryId);
            }
            await recordWebhookDisabled(tx, disabled);
          }
          return fresh.filter((a) => !a.succeeded && a.nextRetryAt !== null && !cancelled.has(a.deliveryId));
        });
      } catch (error) {
        log(`recording ${batch.length} attempts failed, retrying: ${(error as Error).message}`);
        answered.unshift(...batch);
        await pause(500);
        continue;
      }
      const handing = retries.map((a) => ({
        deliveryId: a.deliveryId,
        eventId: a.eventId,
        webhookId: a.webhookId,
        tenant: a.tenant,
        retryAt: a.nextRetryAt ?? new Date(),
      }));
      release(batch.length - handing.length);
      if (handing.length > 0) void handOver(handing);
    }
    recording = false;
  }

  /** Starts each failed delivery's workflow for its retries, then takes it off the queue. */
  async function handOver(list: readonly HandOver[]) {
    await inParallel(list, HAND_OVER_CONCURRENCY, async (delivery) => {
      await settle(1, async () => {
        await startedOnce(
          options.temporal.workflow.start(deliverWebhook, {
            taskQueue: options.taskQueue,
            workflowId: deliveryWorkflowId(delivery.eventId, delivery.webhookId),
            ...workflowLabels(delivery.tenant, 'webhook', delivery.webhookId),
            args: [
              {
                eventId: delivery.eventId,
                webhookId: delivery.webhookId,
                trigger: 'scheduled',
                retryScheduleMs: webhooks.retryScheduleMs,
                resume: { index: 1, at: delivery.retryAt.toISOString() },
              },
            ],
            workflowIdReusePolicy: 'REJECT_DUPLICATE',
          }),
        );
        await deliveries.leaveQueue([delivery.deliveryId]);
      });
    });
  }

  const wake = () => {
    wanted = true;
    void lease();
  };
  const poll = setInterval(wake, pollMs);
  const listener = new pg.Client({ connectionString: options.databaseUrl });
  listener.on('notification', wake);
  listener.on('error', (error) => log(`LISTEN connection lost (${error.message}); polling every ${pollMs} ms`));
  void listener
    .connect()
    .then(() => listener.query('LISTEN valise_deliveries'))
    .catch((error: Error) => log(`cannot LISTEN (${error.message}); polling every ${pollMs} ms`));
  wake();

  return {
    wake,
    leaseMs,
    reserve(wanted) {
      const granted = stopping ? 0 : Math.max(0, Math.min(wanted, limit - held));
      held += granted;
      return granted;
    },
    adopt(leased, reserved) {
      take(leased);
      release(reserved - leased.length);
    },
    async stop() {
      stopping = true;
      clearInterval(poll);
      await listener.end().catch(() => undefined);
      if (held > 0) {
        // What is in flight is recorded before the process goes, so a restart sends nothing twice;
        // a sender that cannot finish within its lease leaves the rest to the next one.
        await Promise.race([new Promise<void>((resolve) => (drained = resolve)), pause(leaseMs)]);
      }
    },
  };
}

type HandOver = { deliveryId: string; eventId: string; webhookId: string; tenant: Tenant; retryAt: Date };

const tenantOfEvent = (event: LeasedDelivery['event']): Tenant => ({
  workspaceId: event.workspace_id,
  environment: event.environment,
});

const idOf = (row: LeasedDelivery) => row.delivery_id;
const keyOf = (attempt: FirstAttemptRecord) => attempt.attemptKey;
