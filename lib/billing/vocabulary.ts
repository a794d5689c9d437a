// Billing's own closed sets of words (docs/billing.md): the processor's subscription and invoice
// statuses, as Stripe names them, and `none` for a workspace without a subscription.

export const SUBSCRIPTION_STATUSES = [
  'none',
  'incomplete',
  'incomplete_expired',
  'trialing',
  'active',
  'past_due',
  'canceled',
  'unpaid',
  'paused',
] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export const INVOICE_STATUSES = ['draft', 'open', 'paid', 'uncollectible', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** What the receiver did with a delivery it verified. */
export const RECEIPT_OUTCOMES = ['recorded', 'duplicate', 'unlinked'] as const;
export type ReceiptOutcome = (typeof RECEIPT_OUTCOMES)[number];
