import { z } from 'zod';
import { INVOICE_STATUSES, SUBSCRIPTION_STATUSES } from '../billing/vocabulary.ts';
import { EMITTED, event } from './define.ts';

// billing.*: what the payment processor's events changed (docs/billing.md). Billing belongs to
// the workspace; its events are recorded in the workspace's `live` environment, and reach the
// live webhooks subscribed to them.

const InvoiceView = z
  .object({
    id: z.string().describe('The invoice id at the processor (`in_…`).'),
    number: z.string().nullable().describe('Human-readable invoice number; null while a draft.'),
    amount: z.int().min(0).describe('Amount due in the smallest currency unit (cents).'),
    currency: z.string().describe('ISO 4217 currency code, lower case.'),
    status: z.enum(INVOICE_STATUSES).describe('Invoice status at the processor.'),
  })
  .describe('The invoice.');

export const BILLING_EVENTS = {
  'billing.invoice_paid': event(
    'An invoice was paid (`invoice.paid`).',
    { invoice: InvoiceView, paid_at: z.iso.datetime().describe('When the payment succeeded.') },
    EMITTED,
  ),
  'billing.payment_failed': event(
    'A payment attempt failed (`invoice.payment_failed`).',
    {
      invoice: InvoiceView,
      attempt_count: z.int().min(1).describe('Attempts so far.'),
      next_attempt_at: z.iso.datetime().nullable().describe('When the processor retries; null when it gave up.'),
    },
    EMITTED,
  ),
  'billing.invoice_updated': event(
    'An invoice was created or changed at the processor other than by a payment (`invoice.created`, `invoice.finalized`, `invoice.voided`…).',
    {
      invoice: InvoiceView,
      processor_event_type: z.string().describe('The processor event that changed it, such as `invoice.finalized`.'),
    },
    EMITTED,
  ),
  'billing.subscription_updated': event(
    'The subscription was created or changed (plan, status, renewal) or ended (`customer.subscription.*`).',
    {
      subscription: z.object({
        id: z.string().describe('The subscription id.'),
        plan: z.string().describe('The plan.'),
        status: z.enum(SUBSCRIPTION_STATUSES).describe('The subscription status at the processor.'),
        current_period_end: z.iso.datetime().nullable().describe('When the current period ends.'),
        cancel_at_period_end: z.boolean().describe('Whether it ends instead of renewing.'),
      }),
    },
    EMITTED,
  ),
};
