import Joi from 'joi';
import { INVOICE_STATUSES, RECEIPT_OUTCOMES, SUBSCRIPTION_STATUSES } from '../../../lib/billing/vocabulary.ts';
import { id, listEnvelope, timestamp } from '../../schemas.ts';

// The billing routes' responses (docs/billing.md).

const bytes = Joi.number().integer().min(0);

export const subscription = Joi.object({
  object: Joi.string().valid('subscription').required(),
  plan: Joi.string().required().description('`free` until the processor reports a subscription.'),
  status: Joi.string()
    .valid(...SUBSCRIPTION_STATUSES)
    .required()
    .description('The status at the processor; `none` without a subscription.'),
  current_period_start: timestamp.allow(null).required(),
  current_period_end: timestamp.allow(null).required(),
  cancel_at_period_end: Joi.boolean().required(),
  customer_id: Joi.string()
    .allow(null)
    .required()
    .description("The processor's customer (`cus_…`); null until linked."),
  subscription_id: Joi.string().allow(null).required().description("The processor's subscription (`sub_…`)."),
  usage: Joi.object({
    period_start: timestamp.required(),
    period_end: timestamp.required(),
    bytes_stored: bytes
      .required()
      .description('Bytes received of the files of live transfers still stored (active or scanning), now.'),
    bytes_sent: bytes.required().description('Bytes of live transfers downloaded within the period.'),
    transfers: Joi.number().integer().min(0).required().description('Live transfers created within the period.'),
  })
    .required()
    .label('BillingUsage'),
}).label('BillingSubscription');

export const invoice = Joi.object({
  object: Joi.string().valid('invoice').required(),
  id: Joi.string().required().description("The processor's invoice id (`in_…`)."),
  number: Joi.string().allow(null).required(),
  status: Joi.string()
    .valid(...INVOICE_STATUSES)
    .required(),
  amount_due: Joi.number().integer().min(0).required().description('In the smallest currency unit (cents).'),
  amount_paid: Joi.number().integer().min(0).required(),
  currency: Joi.string().required(),
  period_start: timestamp.allow(null).required(),
  period_end: timestamp.allow(null).required(),
  hosted_invoice_url: Joi.string().allow(null).required(),
  created_at: timestamp.required(),
}).label('BillingInvoice');

export const invoiceList = listEnvelope(invoice, 'BillingInvoiceList');

export const processorEvent = Joi.object({
  id: id.required(),
  processor_event_id: Joi.string().required(),
  event_type: Joi.string().required(),
  customer_id: Joi.string().allow(null).required(),
  subscription_id: Joi.string().allow(null).required(),
  processed_at: timestamp.required(),
  raw: Joi.object().unknown(true).allow(null).description('The event as received; only with `include_raw=true`.'),
}).label('ProcessorEvent');

export const processorEventList = listEnvelope(processorEvent, 'ProcessorEventList')
  .keys({
    filter: Joi.object({
      event_type: Joi.string().allow(null).required(),
      since: timestamp.allow(null).required(),
      include_raw: Joi.boolean().required(),
      limit: Joi.number().integer().required(),
    }).required(),
    counts_by_type: Joi.array()
      .items(Joi.object({ event_type: Joi.string().required(), count: Joi.number().integer().min(1).required() }))
      .required(),
    note: Joi.string().allow(null).required(),
  })
  .label('ProcessorEventList');

/**
 * What the processor sends, read by the receiver from the signed bytes (lib/billing/receive.ts): its
 * event, of which Valise reads these fields and keeps the rest as received.
 */
export const processorDelivery = Joi.object({
  id: Joi.string().min(1).max(255).required().description("The processor's event id (`evt_…`)."),
  type: Joi.string().min(1).max(255).required().description('Such as `invoice.finalized`.'),
  created: Joi.number().integer().min(0).required().description('Epoch seconds.'),
  data: Joi.object({ object: Joi.object().unknown(true).required() })
    .unknown(true)
    .required(),
})
  .unknown(true)
  .label('ProcessorDelivery');

export const receipt = Joi.object({
  received: Joi.boolean().valid(true).required(),
  processor_event_id: Joi.string().required(),
  outcome: Joi.string()
    .valid(...RECEIPT_OUTCOMES)
    .required()
    .description(
      '`recorded` and applied; `duplicate`: recorded before, nothing changed; `unlinked`: no workspace has its customer, kept nowhere.',
    ),
}).label('ProcessorEventReceipt');
