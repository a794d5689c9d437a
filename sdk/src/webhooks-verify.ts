import type { EventDataByType } from './generated/events.ts';
import {
  DEFAULT_TOLERANCE_SECONDS,
  type IncomingHeaders,
  type VerifyOptions as SignatureVerifyOptions,
  verifyStandard,
  type WebhookPayload,
} from './webhook-signature.ts';

// `Valise.webhooks.verify`, for customers' receivers: the verifier the server's
// own tests run (webhook-signature.ts, shared with lib/), typed by event, with
// the receiver's clock read when the caller does not pass one.

export { WebhookVerificationError } from './webhook-signature.ts';

/** |now − webhook-timestamp| ≤ 300 seconds passes; 301 fails (docs/webhooks.md, "Tolerance"). */
export const WEBHOOK_TOLERANCE_SECONDS = DEFAULT_TOLERANCE_SECONDS;

export type WebhookHeaders = IncomingHeaders;

export type VerifyOptions = Partial<SignatureVerifyOptions>;

/** Every event type a delivery can carry (docs/events.md). */
export type WebhookEventType = keyof EventDataByType;

/**
 * The delivery envelope, one member per event type: narrowing on `type` types `data`
 * (`if (event.type === 'transfer.downloaded') event.data.total_downloads`).
 */
export type WebhookEvent<T extends WebhookEventType = WebhookEventType> = {
  [K in T]: {
    /** `evt_` and 32 hex digits; retries of a delivery keep it. */
    id: string;
    type: K;
    /** When the event occurred (ISO 8601, UTC). */
    timestamp: string;
    data: EventDataByType[K];
  };
}[T];

/**
 * Checks the signature and timestamp of a delivery and returns the parsed event. `payload` must be
 * the raw body exactly as received, never re-serialised JSON. Several secrets may be given during a
 * rotation window; any one matching is enough. The timestamp is compared with `options.now`, by
 * default the clock when this is called (the delivery has just arrived); a receiver that queues
 * deliveries and verifies them later passes the time each arrived. Throws WebhookVerificationError,
 * whose message names the failure (missing header, timestamp too old or too new, no matching
 * signature, a signed body that is empty or not JSON).
 */
export function verifyWebhook<T = WebhookEvent>(
  payload: WebhookPayload,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): Promise<T> {
  const now = options.now ?? Date.now();
  return verifyStandard(payload, headers, secret, { ...options, now }) as Promise<T>;
}
