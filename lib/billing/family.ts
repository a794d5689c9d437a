import type { Family } from '../family.ts';
import { INVOICE_STATUSES, SUBSCRIPTION_STATUSES } from './vocabulary.ts';

// Billing belongs to the workspace, not to one of its environments (docs/billing.md): its tables
// carry workspace_id alone and go with the workspace.
export const billingFamily = {
  name: 'billing',
  openapi: {
    tag: 'billing',
    description:
      "The workspace's plan, subscription and usage, its invoices, and the payment processor's events: the processor's signed webhooks (Stripe) and their record.",
  },
  tables: {
    billing_accounts: {
      scope: { kind: 'workspace' },
      personal: [],
      vocabulary: { status: SUBSCRIPTION_STATUSES },
    },
    billing_invoices: { scope: { kind: 'workspace' }, personal: [], vocabulary: { status: INVOICE_STATUSES } },
    billing_processor_events: {
      scope: { kind: 'workspace' },
      // The event as the processor sent it may name the customer's billing contact.
      personal: ['raw'],
      subjects: { emails: ['raw'] },
      age: 'processed_at',
    },
  },
} satisfies Family;
