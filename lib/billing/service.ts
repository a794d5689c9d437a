import type { InvoiceRow, ProcessorEventRow } from '../db/queries/billing.ts';
import { createBillingQueries } from '../db/queries/billing.ts';
import { DomainError, notFound } from '../errors.ts';
import type { PageQuery } from '../pagination.ts';
import type { Services } from '../services.ts';
import type { Caller } from '../tenancy.ts';

// The workspace's billing as its API keys read it (docs/billing.md). Billing is the workspace's:
// a key of any environment reads the same subscription, invoices and processor events, always
// its own workspace's; usage counts the live environment only.

export const PROCESSOR_EVENTS_DEFAULT_LIMIT = 50;
export const PROCESSOR_EVENTS_MAX_LIMIT = 200;
export const INCLUDE_RAW_NOTE = 'Send include_raw=true to receive each event as the processor sent it, in `raw`.';

export type ProcessorEventsQuery = {
  limit?: number | undefined;
  event_type?: string | undefined;
  since?: Date | undefined;
  include_raw?: string | undefined;
};

/** The period usage is counted in: the subscription's current one, else the calendar month (UTC). */
function usagePeriod(start: Date | null, end: Date | null, now: Date): { from: Date; to: Date } {
  if (start && end && start <= now && now < end) return { from: start, to: end };
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { from, to };
}

export async function getSubscription(services: Services, caller: Caller) {
  const billing = createBillingQueries(services.db);
  const account = await billing.findAccount(caller.workspaceId);
  const period = usagePeriod(account?.current_period_start ?? null, account?.current_period_end ?? null, new Date());
  const usage = await billing.usage(caller.workspaceId, period.from, period.to);
  return {
    object: 'subscription' as const,
    plan: account?.plan ?? 'free',
    status: account?.status ?? 'none',
    current_period_start: account?.current_period_start?.toISOString() ?? null,
    current_period_end: account?.current_period_end?.toISOString() ?? null,
    cancel_at_period_end: account?.cancel_at_period_end ?? false,
    customer_id: account?.customer_id ?? null,
    subscription_id: account?.subscription_id ?? null,
    usage: {
      period_start: period.from.toISOString(),
      period_end: period.to.toISOString(),
      bytes_stored: usage.bytes_stored,
      bytes_sent: usage.bytes_sent,
      transfers: usage.transfers,
    },
  };
}

export function presentInvoice(row: InvoiceRow) {
  return {
    object: 'invoice' as const,
    id: row.id,
    number: row.number,
    status: row.status,
    amount_due: row.amount_due,
    amount_paid: row.amount_paid,
    currency: row.currency,
    period_start: row.period_start?.toISOString() ?? null,
    period_end: row.period_end?.toISOString() ?? null,
    hosted_invoice_url: row.hosted_invoice_url,
    created_at: row.created_at.toISOString(),
  };
}

export async function listInvoices(services: Services, caller: Caller, page: PageQuery) {
  const window = services.paginator.open('billing-invoices', {}, page);
  const rows = await createBillingQueries(services.db).listInvoices(caller.workspaceId, window);
  return services.paginator.close('billing-invoices', {}, page, rows, presentInvoice);
}

function presentProcessorEvent(row: ProcessorEventRow, includeRaw: boolean) {
  return {
    id: row.id,
    processor_event_id: row.processor_event_id,
    event_type: row.event_type,
    customer_id: row.customer_id,
    subscription_id: row.subscription_id,
    processed_at: row.processed_at.toISOString(),
    ...(includeRaw ? { raw: row.raw } : {}),
  };
}

/**
 * The caller's workspace's processor events, newest first by `processed_at`: `limit` clamped into
 * 1..200 (default 50), `event_type` exact, `since` inclusive, `raw` only for `include_raw=true`.
 */
export async function listProcessorEvents(services: Services, caller: Caller, query: ProcessorEventsQuery) {
  const requested = Math.trunc(query.limit ?? PROCESSOR_EVENTS_DEFAULT_LIMIT);
  const limit = Math.min(PROCESSOR_EVENTS_MAX_LIMIT, Math.max(1, requested));
  const includeRaw = query.include_raw === 'true';
  const eventType = query.event_type ?? null;
  const since = query.since ?? null;
  const rows = await createBillingQueries(services.db).listEvents(caller.workspaceId, {
    eventType,
    since,
    fetch: limit + 1,
  });
  const page = rows.slice(0, limit);
  const counts = new Map<string, number>();
  for (const row of page) counts.set(row.event_type, (counts.get(row.event_type) ?? 0) + 1);
  return {
    object: 'list' as const,
    data: page.map((row) => presentProcessorEvent(row, includeRaw)),
    has_more: rows.length > limit,
    next_cursor: null,
    limit,
    offset: null,
    filter: { event_type: eventType, since: since?.toISOString() ?? null, include_raw: includeRaw, limit },
    counts_by_type: [...counts]
      .map(([event_type, count]) => ({ event_type, count }))
      .sort((a, b) => b.count - a.count || a.event_type.localeCompare(b.event_type)),
    note: includeRaw ? null : INCLUDE_RAW_NOTE,
  };
}

/** Links a workspace to its processor customer (`npm run admin -- billing-link`). */
export async function linkCustomer(services: Pick<Services, 'db'>, workspaceId: string, customerId: string) {
  const billing = createBillingQueries(services.db);
  const holder = await billing.findAccountByCustomer(customerId);
  if (holder && holder.workspace_id !== workspaceId) {
    throw new DomainError('validation_error', `${customerId} is linked to workspace ${holder.workspace_id}.`, {
      param: 'customer',
    });
  }
  const linked = await billing.link(workspaceId, customerId);
  if (!linked) throw notFound('workspace');
  return linked;
}
