import { randomUUID } from 'node:crypto';
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { DatabasePool } from 'slonik';
import { z } from 'zod';
import { sql } from '../../lib/db/sql.ts';
import type { EventData } from '../../lib/events/catalog.ts';
import { eventually } from './api.ts';

// Positive barriers for "nothing else happened" checks. The dispatcher queues
// every delivery an event sets off (one per subscribed webhook) and starts every
// rule run (one workflow per matching rule) in the transaction that stamps the
// event dispatched (lib/events/dispatcher.ts). So once an event is dispatched,
// the deliveries and runs it will ever have exist, and one that does not exist
// will never happen.

/** Waits until every one of these events has been dispatched. */
export async function eventsDispatched(db: DatabasePool, eventIds: readonly string[], timeoutMs = 30_000) {
  await eventually(async () => {
    const pending = await db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
      SELECT count(*) AS count FROM events
      WHERE id = ANY (${sql.array([...eventIds], 'text')}) AND dispatched_at IS NULL`);
    return pending === 0 ? true : undefined;
  }, timeoutMs);
}

/** Whether the event was ever queued for the webhook (a webhook_deliveries row exists). */
export async function deliveryQueued(db: DatabasePool, eventId: string, webhookId: string): Promise<boolean> {
  const count = await db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
    SELECT count(*) AS count FROM webhook_deliveries WHERE event_id = ${eventId} AND webhook_id = ${webhookId}`);
  return count > 0;
}

/** Waits until no delivery of these events is pending: each one succeeded, failed or was cancelled. */
export async function deliveriesSettled(db: DatabasePool, eventIds: readonly string[], timeoutMs = 60_000) {
  await eventually(async () => {
    const pending = await db.oneFirst(sql.type(z.object({ count: z.coerce.number() }))`
      SELECT count(*) AS count FROM webhook_deliveries
      WHERE event_id = ANY (${sql.array([...eventIds], 'text')}) AND status = 'pending'`);
    return pending === 0 ? true : undefined;
  }, timeoutMs);
}

/** Whether a workflow with this id was ever started (running or closed). */
export async function workflowStarted(temporal: Client, workflowId: string): Promise<boolean> {
  try {
    await temporal.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/** A `transfer.created` payload of a transfer that does not exist: what dispatch tests and benches fan out. */
export function standInTransferCreated(): EventData<'transfer.created'> {
  return {
    transfer: {
      id: randomUUID(),
      short_code: 'standin000',
      status: 'scanning',
      transfer_title: null,
      encryption_mode: 'server',
      recipient: null,
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      files_count: 1,
      total_bytes: 1,
    },
  };
}
