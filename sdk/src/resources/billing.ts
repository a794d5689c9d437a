import type { RequestOptions } from '../client.ts';
import type { PageRequest } from '../pagination.ts';
import type { BillingInvoice, BillingSubscription, ListProcessorEventsParams, ProcessorEventList } from '../types.ts';
import { Resource } from './resource.ts';

/**
 * The workspace's billing (scope `billing:read`): its plan, subscription and live usage, its
 * invoices, and the payment processor's events. The processor's own webhook receiver is for the
 * processor, not wrapped here.
 */
export class Billing extends Resource {
  /** Plan, status, period, processor ids and usage this period (live environment only). */
  subscription(options?: RequestOptions): Promise<BillingSubscription> {
    return this.call('billing.subscription', { options });
  }

  /** Invoices, newest first, page after page. */
  invoices(options?: RequestOptions): PageRequest<BillingInvoice> {
    return this.paged('billing.invoices', { options });
  }

  /** One batch of processor events, newest first: `limit` 1..200 (default 50), `include_raw: 'true'` for `raw`. */
  processorEvents(params: ListProcessorEventsParams = {}, options?: RequestOptions): Promise<ProcessorEventList> {
    return this.call('billing.processorEvents', { query: params, options });
  }
}
