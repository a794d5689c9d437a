import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { INVOICE_STATUSES, SUBSCRIPTION_STATUSES } from '../../billing/vocabulary.ts';
import type { PageWindow } from '../../pagination.ts';
import { olderThanCursor } from '../paging.ts';
import { sql } from '../sql.ts';

// Billing (docs/billing.md): the workspace's processor account, its invoices and the processor
// events recorded. Billing is workspace-level: every query is filtered on the workspace alone, and
// usage counts the live environment only (the sandbox and test keys are not billed).

export const billingAccountRow = z.object({
  workspace_id: z.uuid(),
  customer_id: z.string(),
  subscription_id: z.string().nullable(),
  plan: z.string(),
  status: z.enum(SUBSCRIPTION_STATUSES),
  current_period_start: z.date().nullable(),
  current_period_end: z.date().nullable(),
  cancel_at_period_end: z.boolean(),
});
export type BillingAccountRow = z.infer<typeof billingAccountRow>;

export const invoiceRow = z.object({
  id: z.string(),
  workspace_id: z.uuid(),
  number: z.string().nullable(),
  status: z.enum(INVOICE_STATUSES),
  // bigint columns: slonik reads them as BigInt; amounts in cents fit a number.
  amount_due: z.coerce.number().int(),
  amount_paid: z.coerce.number().int(),
  currency: z.string(),
  period_start: z.date().nullable(),
  period_end: z.date().nullable(),
  hosted_invoice_url: z.string().nullable(),
  created_at: z.date(),
});
export type InvoiceRow = z.infer<typeof invoiceRow>;

export const processorEventRow = z.object({
  id: z.uuid(),
  processor_event_id: z.string(),
  workspace_id: z.uuid(),
  event_type: z.string(),
  customer_id: z.string().nullable(),
  subscription_id: z.string().nullable(),
  processed_at: z.date(),
  raw: z.record(z.string(), z.unknown()).nullable(),
});
export type ProcessorEventRow = z.infer<typeof processorEventRow>;

const usageRow = z.object({ bytes_stored: z.number(), bytes_sent: z.number(), transfers: z.number() });
export type UsageRow = z.infer<typeof usageRow>;

export type SubscriptionState = Omit<BillingAccountRow, 'workspace_id' | 'customer_id'>;
export type InvoiceState = Omit<InvoiceRow, 'workspace_id'>;
export type NewProcessorEvent = Omit<ProcessorEventRow, 'id' | 'processed_at'>;
export type ProcessorEventFilter = { eventType: string | null; since: Date | null; fetch: number };

const accountColumns = sql.fragment`workspace_id, customer_id, subscription_id, plan, status, current_period_start,
  current_period_end, cancel_at_period_end`;
const invoiceColumns = sql.fragment`id, workspace_id, number, status, amount_due, amount_paid, currency, period_start,
  period_end, hosted_invoice_url, created_at`;
const ts = (value: Date | null) => (value ? sql.timestamp(value) : null);

export function createBillingQueries(db: CommonQueryMethods) {
  return {
    async findAccount(workspaceId: string): Promise<BillingAccountRow | null> {
      return db.maybeOne(sql.type(billingAccountRow)`
        SELECT ${accountColumns} FROM billing_accounts WHERE workspace_id = ${workspaceId}`);
    },

    async findAccountByCustomer(customerId: string): Promise<BillingAccountRow | null> {
      return db.maybeOne(sql.type(billingAccountRow)`
        SELECT ${accountColumns} FROM billing_accounts WHERE customer_id = ${customerId}`);
    },

    /**
     * Links the workspace to its processor customer; a workspace linked to another customer is
     * relinked, a customer already linked to another workspace is not (null then).
     */
    async link(workspaceId: string, customerId: string): Promise<BillingAccountRow | null> {
      return db.maybeOne(sql.type(billingAccountRow)`
        INSERT INTO billing_accounts (workspace_id, customer_id)
        SELECT id, ${customerId} FROM workspaces WHERE id = ${workspaceId}
        ON CONFLICT (workspace_id) DO UPDATE SET customer_id = EXCLUDED.customer_id, updated_at = ms_now()
        RETURNING ${accountColumns}`);
    },

    /** Applies a subscription's state unless a newer event applied already; true when it did. */
    async applySubscription(workspaceId: string, state: SubscriptionState, eventCreated: Date): Promise<boolean> {
      const row = await db.maybeOne(sql.type(z.object({ workspace_id: z.uuid() }))`
        UPDATE billing_accounts SET subscription_id = ${state.subscription_id}, plan = ${state.plan},
          status = ${state.status}, current_period_start = ${ts(state.current_period_start)},
          current_period_end = ${ts(state.current_period_end)}, cancel_at_period_end = ${state.cancel_at_period_end},
          processor_updated_at = ${sql.timestamp(eventCreated)}, updated_at = ms_now()
        WHERE workspace_id = ${workspaceId}
          AND (processor_updated_at IS NULL OR processor_updated_at <= ${sql.timestamp(eventCreated)})
        RETURNING workspace_id`);
      return row !== null;
    },

    /** Records or updates an invoice unless a newer event described it already; true when it did. */
    async applyInvoice(workspaceId: string, invoice: InvoiceState, eventCreated: Date): Promise<boolean> {
      const row = await db.maybeOne(sql.type(z.object({ id: z.string() }))`
        INSERT INTO billing_invoices (id, workspace_id, number, status, amount_due, amount_paid, currency,
          period_start, period_end, hosted_invoice_url, processor_updated_at, created_at)
        VALUES (${invoice.id}, ${workspaceId}, ${invoice.number}, ${invoice.status}, ${invoice.amount_due},
          ${invoice.amount_paid}, ${invoice.currency}, ${ts(invoice.period_start)}, ${ts(invoice.period_end)},
          ${invoice.hosted_invoice_url}, ${sql.timestamp(eventCreated)}, ${sql.timestamp(invoice.created_at)})
        ON CONFLICT (id) DO UPDATE SET number = EXCLUDED.number, status = EXCLUDED.status,
          amount_due = EXCLUDED.amount_due, amount_paid = EXCLUDED.amount_paid, currency = EXCLUDED.currency,
          period_start = EXCLUDED.period_start, period_end = EXCLUDED.period_end,
          hosted_invoice_url = EXCLUDED.hosted_invoice_url, processor_updated_at = EXCLUDED.processor_updated_at
        WHERE billing_invoices.workspace_id = EXCLUDED.workspace_id
          AND billing_invoices.processor_updated_at <= EXCLUDED.processor_updated_at
        RETURNING id`);
      return row !== null;
    },

    async listInvoices(workspaceId: string, window: PageWindow): Promise<readonly InvoiceRow[]> {
      return db.any(sql.type(invoiceRow)`
        SELECT ${invoiceColumns} FROM billing_invoices i
        WHERE i.workspace_id = ${workspaceId} AND ${olderThanCursor(window, 'i')}
        ORDER BY i.created_at DESC, i.id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },

    /** Records a processor event once; null when its `processor_event_id` was recorded before. */
    async recordEvent(event: NewProcessorEvent): Promise<ProcessorEventRow | null> {
      return db.maybeOne(sql.type(processorEventRow)`
        INSERT INTO billing_processor_events (processor_event_id, workspace_id, event_type, customer_id,
          subscription_id, raw)
        VALUES (${event.processor_event_id}, ${event.workspace_id}, ${event.event_type}, ${event.customer_id},
          ${event.subscription_id}, ${event.raw === null ? null : sql.jsonb(event.raw as never)})
        ON CONFLICT (processor_event_id) DO NOTHING
        RETURNING id, processor_event_id, workspace_id, event_type, customer_id, subscription_id, processed_at, raw`);
    },

    /** The workspace's processor events, newest first by `processed_at`, `since` inclusive. */
    async listEvents(workspaceId: string, filter: ProcessorEventFilter): Promise<readonly ProcessorEventRow[]> {
      return db.any(sql.type(processorEventRow)`
        SELECT id, processor_event_id, workspace_id, event_type, customer_id, subscription_id, processed_at, raw
        FROM billing_processor_events
        WHERE workspace_id = ${workspaceId}
          AND ${filter.eventType === null ? sql.fragment`TRUE` : sql.fragment`event_type = ${filter.eventType}`}
          AND ${filter.since === null ? sql.fragment`TRUE` : sql.fragment`processed_at >= ${sql.timestamp(filter.since)}`}
        ORDER BY processed_at DESC, id DESC
        LIMIT ${filter.fetch}`);
    },

    /**
     * Live usage: bytes of the files of transfers still stored now, and, within [from, to), the
     * transfers created and the bytes sent (each download counts its transfer's files).
     */
    async usage(workspaceId: string, from: Date, to: Date): Promise<UsageRow> {
      const start = sql.timestamp(from);
      const end = sql.timestamp(to);
      return db.one(sql.type(usageRow)`
        SELECT
          (SELECT coalesce(sum(f.bytes_received), 0)::float8 FROM transfers t JOIN transfer_files f ON f.transfer_id = t.id
            WHERE t.workspace_id = ${workspaceId} AND t.environment = 'live' AND t.status IN ('active', 'scanning'))
            AS bytes_stored,
          (SELECT coalesce(sum(sizes.bytes), 0)::float8 FROM transfers t
            JOIN transfer_downloads d ON d.transfer_id = t.id AND d.created_at >= ${start} AND d.created_at < ${end}
            CROSS JOIN LATERAL (SELECT coalesce(sum(size), 0) AS bytes FROM transfer_files WHERE transfer_id = t.id) sizes
            WHERE t.workspace_id = ${workspaceId} AND t.environment = 'live') AS bytes_sent,
          (SELECT count(*)::float8 FROM transfers t
            WHERE t.workspace_id = ${workspaceId} AND t.environment = 'live'
              AND t.created_at >= ${start} AND t.created_at < ${end}) AS transfers`);
    },
  };
}
