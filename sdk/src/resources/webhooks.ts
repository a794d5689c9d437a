import type { RequestOptions } from '../client.ts';
import type { ListEnvelope, PageRequest } from '../pagination.ts';
import type {
  CreatedWebhook,
  CreateWebhookParams,
  DeletedWebhook,
  EventCatalog,
  EventType,
  ListDeliveriesParams,
  RotatedWebhookSecret,
  UpdateWebhookParams,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryAttempt,
} from '../types.ts';
import { type VerifyOptions, verifyWebhook, type WebhookEvent, type WebhookHeaders } from '../webhooks-verify.ts';
import { Resource } from './resource.ts';

/** Webhook subscriptions, their delivery log, and signature verification for receivers. */
export class Webhooks extends Resource {
  list(params: { limit?: number } = {}, options?: RequestOptions): PageRequest<Webhook> {
    return this.paged('webhooks.list', { query: params, options });
  }

  /** The answer carries `secret` (`whsec_…`), shown this once: keep it to verify deliveries. */
  create(params: CreateWebhookParams, options?: RequestOptions): Promise<CreatedWebhook> {
    return this.call('webhooks.create', { body: params, options });
  }

  /** `PATCH /v1/webhooks`: the id travels in the body, as the API wants. */
  update(id: string, params: Omit<UpdateWebhookParams, 'id'>, options?: RequestOptions): Promise<Webhook> {
    return this.call('webhooks.update', { body: { ...params, id }, options });
  }

  delete(id: string, options?: RequestOptions): Promise<DeletedWebhook> {
    return this.call('webhooks.delete', { body: { id }, options });
  }

  /** The public catalog of event types with their payloads. */
  eventTypes(options?: RequestOptions): PageRequest<EventType, EventCatalog & ListEnvelope<EventType>> {
    return this.paged('webhooks.eventTypes', { options });
  }

  deliveries(id: string, params: ListDeliveriesParams = {}, options?: RequestOptions): PageRequest<WebhookDelivery> {
    return this.paged('webhooks.deliveries', { params: { id }, query: params, options });
  }

  /** Sends a signed `ping` now; the answer is the attempt. */
  test(id: string, options?: RequestOptions): Promise<WebhookDeliveryAttempt> {
    return this.call('webhooks.test', { params: { id }, options });
  }

  /** A new secret; the old one keeps signing alongside for 24 hours. */
  rotateSecret(id: string, options?: RequestOptions): Promise<RotatedWebhookSecret> {
    return this.call('webhooks.rotateSecret', { params: { id }, options });
  }

  retryDelivery(id: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDeliveryAttempt> {
    return this.call('webhooks.retryDelivery', { params: { id, deliveryId }, options });
  }

  /** Same as `Valise.webhooks.verify`; see there. */
  verify<T = WebhookEvent>(
    payload: string | Uint8Array,
    headers: WebhookHeaders,
    secret: string | readonly string[],
    options?: VerifyOptions,
  ): Promise<T> {
    return verifyWebhook<T>(payload, headers, secret, options);
  }
}
