import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import {
  type BillingAccountRow,
  createBillingQueries,
  type InvoiceState,
  type SubscriptionState,
} from '../db/queries/billing.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { Tenant } from '../tenancy.ts';
import { verifyProcessorSignature } from './signature.ts';
import { INVOICE_STATUSES, type ReceiptOutcome, SUBSCRIPTION_STATUSES } from './vocabulary.ts';

// The payment processor's webhook receiver (POST /v1/billing/processor/stripe, docs/billing.md).
// A delivery is verified before anything reads it; a verified event is recorded once by its
// `processor_event_id` and applied in the same transaction, with the billing.* event it causes, so
// a redelivery (processors retry until they get a 2xx) finds it recorded and changes nothing.

const seconds = z.number().int().nonnegative();
const fromSeconds = (value: number | null | undefined) => (value == null ? null : new Date(value * 1000));
const idOf = z.union([z.string(), z.object({ id: z.string() }).transform((object) => object.id)]);

const processorEvent = z.object({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(255),
  created: seconds,
  data: z.object({ object: z.record(z.string(), z.unknown()) }),
});
type ProcessorEvent = z.infer<typeof processorEvent>;

const metadata = z.record(z.string(), z.string()).nullish();

const price = z.object({ id: z.string(), lookup_key: z.string().nullish(), nickname: z.string().nullish() }).nullish();
const subscription = z.object({
  id: z.string(),
  customer: idOf,
  status: z.enum(SUBSCRIPTION_STATUSES),
  cancel_at_period_end: z.boolean().nullish(),
  // Older API versions carry the period on the subscription, newer ones on its items.
  current_period_start: seconds.nullish(),
  current_period_end: seconds.nullish(),
  items: z
    .object({
      data: z.array(
        z.object({ price, current_period_start: seconds.nullish(), current_period_end: seconds.nullish() }),
      ),
    })
    .nullish(),
  metadata,
});

const invoice = z.object({
  id: z.string(),
  customer: idOf,
  number: z.string().nullish(),
  status: z.enum(INVOICE_STATUSES),
  amount_due: z.number().int().nonnegative(),
  amount_paid: z.number().int().nonnegative(),
  currency: z.string().min(1).max(10),
  period_start: seconds.nullish(),
  period_end: seconds.nullish(),
  hosted_invoice_url: z.string().nullish(),
  created: seconds,
  attempt_count: z.number().int().nullish(),
  next_payment_attempt: seconds.nullish(),
  status_transitions: z.object({ paid_at: seconds.nullish() }).nullish(),
  subscription: idOf.nullish(),
  metadata,
});

const customerOnly = z.object({ customer: idOf.nullish(), id: z.string().nullish(), metadata });

export type Receipt = { received: true; processor_event_id: string; outcome: ReceiptOutcome };

function unreadable(error: z.ZodError): DomainError {
  const issue = error.issues[0];
  return new DomainError('validation_error', `The event is not one the receiver can read: ${issue?.message}.`, {
    param: issue ? ['body', ...issue.path].join('.') : 'body',
  });
}

/** The customer an event is about: the object's `customer`, or the object itself for `customer.*`. */
function customerOf(event: ProcessorEvent): string | null {
  const object = customerOnly.safeParse(event.data.object);
  if (!object.success) return null;
  if (object.data.customer) return object.data.customer;
  return event.type.startsWith('customer.') && !event.type.startsWith('customer.subscription.')
    ? (object.data.id ?? null)
    : null;
}

const workspaceIdIn = (event: ProcessorEvent) => {
  const value = customerOnly.safeParse(event.data.object).data?.metadata?.workspace_id;
  return value && z.uuid().safeParse(value).success ? value : null;
};

/**
 * The workspace the customer belongs to: the one linked to it (`admin billing-link`), else the one
 * the object's `metadata.workspace_id` names, which is then linked, if it has no other customer.
 */
async function accountFor(db: CommonQueryMethods, event: ProcessorEvent, customerId: string) {
  const billing = createBillingQueries(db);
  const linked = await billing.findAccountByCustomer(customerId);
  if (linked) return linked;
  const workspaceId = workspaceIdIn(event);
  if (!workspaceId) return null;
  const current = await billing.findAccount(workspaceId);
  if (current) return null;
  return billing.link(workspaceId, customerId);
}

export async function receiveProcessorEvent(services: Services, body: Buffer, signature: string | undefined) {
  verifyProcessorSignature(body, signature, services.config.billing.webhookSecrets);
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    throw new DomainError('validation_error', 'The body is not JSON.', { param: 'body' });
  }
  const parsed = processorEvent.safeParse(json);
  if (!parsed.success) throw unreadable(parsed.error);
  const event = parsed.data;
  const receipt = (outcome: ReceiptOutcome): Receipt => ({ received: true, processor_event_id: event.id, outcome });
  const customerId = customerOf(event);

  return services.db.transaction(async (tx) => {
    const account = customerId ? await accountFor(tx, event, customerId) : null;
    // Acknowledged, so that the processor stops retrying, and kept nowhere: no workspace is its owner.
    if (!account) return receipt('unlinked');
    const recorded = await createBillingQueries(tx).recordEvent({
      processor_event_id: event.id,
      workspace_id: account.workspace_id,
      event_type: event.type,
      customer_id: customerId,
      subscription_id: subscriptionIdOf(event),
      raw: json as Record<string, unknown>,
    });
    if (!recorded) return receipt('duplicate');
    await apply(tx, account, event);
    return receipt('recorded');
  });
}

function subscriptionIdOf(event: ProcessorEvent): string | null {
  if (event.type.startsWith('customer.subscription.')) {
    const id = event.data.object.id;
    return typeof id === 'string' ? id : null;
  }
  const parsed = z.object({ subscription: idOf.nullish() }).safeParse(event.data.object);
  return parsed.data?.subscription ?? null;
}

/** Applies what the event says to the subscription or invoices, and records the billing.* event. */
async function apply(db: CommonQueryMethods, account: BillingAccountRow, event: ProcessorEvent) {
  const tenant: Tenant = { workspaceId: account.workspace_id, environment: 'live' };
  const billing = createBillingQueries(db);
  const events = createEventQueries(db);
  const created = new Date(event.created * 1000);

  if (event.type.startsWith('customer.subscription.')) {
    const parsed = subscription.safeParse(event.data.object);
    if (!parsed.success) throw unreadable(parsed.error);
    const state = subscriptionState(parsed.data, event.type === 'customer.subscription.deleted');
    if (!(await billing.applySubscription(account.workspace_id, state, created))) return;
    await events.record(tenant, 'billing.subscription_updated', {
      subscription: {
        id: parsed.data.id,
        plan: state.plan,
        status: state.status,
        current_period_end: state.current_period_end?.toISOString() ?? null,
        cancel_at_period_end: state.cancel_at_period_end,
      },
    });
    return;
  }

  if (event.type.startsWith('invoice.')) {
    const parsed = invoice.safeParse(event.data.object);
    if (!parsed.success) throw unreadable(parsed.error);
    const state = invoiceState(parsed.data);
    if (!(await billing.applyInvoice(account.workspace_id, state, created))) return;
    const view = {
      id: state.id,
      number: state.number,
      amount: state.amount_due,
      currency: state.currency,
      status: state.status,
    };
    if (event.type === 'invoice.paid') {
      const paidAt = fromSeconds(parsed.data.status_transitions?.paid_at) ?? created;
      await events.record(tenant, 'billing.invoice_paid', { invoice: view, paid_at: paidAt.toISOString() });
    } else if (event.type === 'invoice.payment_failed') {
      await events.record(tenant, 'billing.payment_failed', {
        invoice: view,
        attempt_count: Math.max(1, parsed.data.attempt_count ?? 1),
        next_attempt_at: fromSeconds(parsed.data.next_payment_attempt)?.toISOString() ?? null,
      });
    } else {
      await events.record(tenant, 'billing.invoice_updated', { invoice: view, processor_event_type: event.type });
    }
  }
  // Other types (customer.*, payment_intent.*…) are recorded and change nothing.
}

function subscriptionState(object: z.infer<typeof subscription>, ended: boolean): SubscriptionState {
  const item = object.items?.data[0];
  return {
    subscription_id: object.id,
    // The plan's name: the subscription's `metadata.plan`, else its price's lookup key or id.
    plan: ended ? 'free' : (object.metadata?.plan ?? item?.price?.lookup_key ?? item?.price?.id ?? 'unknown'),
    status: object.status,
    current_period_start: fromSeconds(object.current_period_start ?? item?.current_period_start),
    current_period_end: fromSeconds(object.current_period_end ?? item?.current_period_end),
    cancel_at_period_end: object.cancel_at_period_end ?? false,
  };
}

function invoiceState(object: z.infer<typeof invoice>): InvoiceState {
  return {
    id: object.id,
    number: object.number ?? null,
    status: object.status,
    amount_due: object.amount_due,
    amount_paid: object.amount_paid,
    currency: object.currency.toLowerCase(),
    period_start: fromSeconds(object.period_start),
    period_end: fromSeconds(object.period_end),
    hosted_invoice_url: object.hosted_invoice_url ?? null,
    created_at: new Date(object.created * 1000),
  };
}
