import type { Client, Workflow } from '@temporalio/client';
import pg from 'pg';
import type { CommonQueryMethods, DatabasePool } from 'slonik';
import type { runRule } from '../../workflows/runRule.ts';
import { createDeliveryQueries, type LeasedDelivery } from '../db/queries/deliveries.ts';
import { createEventQueries, type DispatchableEvent } from '../db/queries/events.ts';
import { inParallel, pause } from '../in-parallel.ts';
import { outboxLag } from '../observability/metrics.ts';
import { startedOnce } from '../temporal.ts';
import type { WorkflowLabels } from '../temporal-search-attributes.ts';
import type { Sender } from '../webhooks/sender.ts';

// The outbox relay. Events commit with the change they describe; this queues
// a delivery per subscribed webhook for the sender (lib/webhooks/sender.ts),
// starts a Temporal workflow per matching rule (through `planRuns`), then
// stamps the event dispatched, all in the transaction that claims the events
// (FOR NO KEY UPDATE SKIP LOCKED).
//
// Exactly once per (event, webhook) and per (rule, event): a delivery is a row
// unique on the pair, and a rule run a workflow whose id is derived from the
// pair, started with REJECT_DUPLICATE. A crash before the commit leaves the
// events undispatched and queues nothing; the next pass starts the same ids
// again, Temporal refuses the ones that exist, and nothing is doubled. A
// NOTIFY from the events table wakes the loop; a slow poll covers a lost
// connection.

type Run<W extends Workflow> = { workflow: W; workflowId: string; args: Parameters<W>; labels: WorkflowLabels };
/**
 * A workflow the dispatcher starts: its function, its id (exported by its workflow's file), its
 * arguments, and its search attributes and summary (lib/temporal-search-attributes.ts).
 */
export type PlannedRun = Run<typeof runRule>;

export type DispatcherOptions = {
  db: DatabasePool;
  databaseUrl: string;
  temporal: Client;
  taskQueue: string;
  /**
   * This process's sender: the deliveries a batch queues go to it already leased, as far as it has
   * room, with no lease statement or NOTIFY's round trip between the commit and their POSTs. The
   * rest wait on the queue for any sender, woken by a NOTIFY.
   */
  sender?: Pick<Sender, 'leaseMs' | 'reserve' | 'adopt'>;
  /** Rule runs for a batch of events (lib/rules); none when omitted. */
  planRuns?: (tx: CommonQueryMethods, events: readonly DispatchableEvent[]) => Promise<readonly PlannedRun[]>;
  batchSize?: number;
  pollMs?: number;
  log?: (message: string) => void;
};

export type Dispatcher = {
  stop(): Promise<void> /** Dispatches until nothing is left; for tests and benches. */;
  drain(): Promise<number>;
};

const START_CONCURRENCY = 32;

export function startDispatcher(options: DispatcherOptions): Dispatcher {
  const batchSize = options.batchSize ?? 200;
  const pollMs = options.pollMs ?? 5_000;
  const log = options.log ?? ((message) => process.stderr.write(`dispatcher: ${message}\n`));
  let stopped = false;
  let wake: (() => void) | null = null;
  let pending = true;

  const signal = () => {
    pending = true;
    wake?.();
  };

  async function start(run: PlannedRun): Promise<void> {
    await startedOnce(
      options.temporal.workflow.start(run.workflow, {
        taskQueue: options.taskQueue,
        workflowId: run.workflowId,
        args: run.args,
        ...run.labels,
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        // Honoured when this client shares a connection with a worker on the queue (workers/main.ts).
        requestEagerStart: true,
      }),
    );
  }

  async function dispatchBatch(): Promise<number> {
    const { sender } = options;
    // Room the sender keeps for this batch from just before the insert until the commit.
    let reserved = 0;
    // What the sender takes once the transaction has committed: nothing when it failed.
    let leased: readonly LeasedDelivery[] = [];
    try {
      const batch = await options.db.transaction(async (tx) => {
        const events = createEventQueries(tx);
        const claimed = await events.claimUndispatched(batchSize);
        if (claimed.length === 0) return { claimed: 0, leased: [] };
        const now = Date.now();
        for (const event of claimed) outboxLag.observe((now - event.created_at.getTime()) / 1000);
        if (options.planRuns) await inParallel(await options.planRuns(tx, claimed), START_CONCURRENCY, start);
        // Queues the deliveries, those the sender has room for leased to it, and stamps the events
        // dispatched, in one round trip.
        reserved = sender?.reserve(Number.POSITIVE_INFINITY) ?? 0;
        const queued = await createDeliveryQueries(tx).queueFirstAttempts(
          claimed.map((event) => event.id),
          sender && reserved > 0 ? { limit: reserved, leaseMs: sender.leaseMs } : undefined,
        );
        return { claimed: claimed.length, leased: queued };
      });
      leased = batch.leased;
      return batch.claimed;
    } finally {
      if (reserved > 0) sender?.adopt(leased, reserved);
    }
  }

  async function dispatchAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const handled = await dispatchBatch();
      total += handled;
      if (handled < batchSize) return total;
    }
  }

  const listener = new pg.Client({ connectionString: options.databaseUrl });
  listener.on('notification', signal);
  // A broken LISTEN connection only slows dispatch down to the poll; say so once.
  listener.on('error', (error) => log(`LISTEN connection lost (${error.message}); polling every ${pollMs} ms`));
  const listening = listener
    .connect()
    .then(() => listener.query('LISTEN valise_events'))
    .catch((error: Error) => log(`cannot LISTEN (${error.message}); polling every ${pollMs} ms`));

  const loop = (async () => {
    await listening;
    while (!stopped) {
      if (pending) {
        pending = false;
        try {
          await dispatchAll();
        } catch (error) {
          log(`pass failed, retrying: ${(error as Error).message}`);
          pending = true;
          await pause(1_000);
          continue;
        }
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(signal, pollMs);
        wake = () => {
          clearTimeout(timer);
          wake = null;
          resolve();
        };
        if (pending || stopped) wake();
      });
    }
  })();

  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await listener.end().catch(() => undefined);
    },
    drain: dispatchAll,
  };
}
