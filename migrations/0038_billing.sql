-- Billing (docs/billing.md): each workspace's account at the payment processor (Stripe), its
-- invoices, and every processor event the receiver (POST /v1/billing/processor/stripe) recorded.
-- Billing belongs to the workspace, not to one environment: only live usage is billed.

-- The workspace's customer and subscription at the processor. `processor_updated_at` is the
-- creation time of the newest event applied: an older event delivered late changes nothing.
CREATE TABLE billing_accounts (
  workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
  customer_id text NOT NULL UNIQUE CHECK (length(customer_id) BETWEEN 1 AND 255),
  subscription_id text CHECK (length(subscription_id) <= 255),
  plan text NOT NULL DEFAULT 'free' CHECK (length(plan) BETWEEN 1 AND 255),
  status text NOT NULL DEFAULT 'none' CHECK (status IN (
    'none', 'incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'canceled', 'unpaid', 'paused')),
  current_period_start timestamptz,
  current_period_end timestamptz,
  cancel_at_period_end boolean NOT NULL DEFAULT false,
  processor_updated_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  updated_at timestamptz NOT NULL DEFAULT ms_now()
);

-- Invoices as the processor last described them; `id` is the processor's (`in_…`).
CREATE TABLE billing_invoices (
  id text PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 255),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  number text,
  status text NOT NULL CHECK (status IN ('draft', 'open', 'paid', 'uncollectible', 'void')),
  amount_due bigint NOT NULL CHECK (amount_due >= 0),
  amount_paid bigint NOT NULL CHECK (amount_paid >= 0),
  currency text NOT NULL CHECK (length(currency) BETWEEN 1 AND 10),
  period_start timestamptz,
  period_end timestamptz,
  hosted_invoice_url text,
  processor_updated_at timestamptz NOT NULL,
  -- When the processor created the invoice.
  created_at timestamptz NOT NULL
);

CREATE INDEX billing_invoices_listing ON billing_invoices (workspace_id, created_at DESC, id DESC);

-- Every processor event recorded, once: a redelivery of the same `processor_event_id` (processors
-- retry) finds its row and changes nothing. `raw` is the event as received: it may name the
-- customer's billing contact (personal).
CREATE TABLE billing_processor_events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  processor_event_id text NOT NULL UNIQUE CHECK (length(processor_event_id) BETWEEN 1 AND 255),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  event_type text NOT NULL CHECK (length(event_type) BETWEEN 1 AND 255),
  customer_id text,
  subscription_id text,
  processed_at timestamptz NOT NULL DEFAULT ms_now(),
  raw jsonb
);

CREATE INDEX billing_processor_events_listing ON billing_processor_events (workspace_id, processed_at DESC, id DESC);
CREATE INDEX billing_processor_events_by_type
  ON billing_processor_events (workspace_id, event_type, processed_at DESC, id DESC);

