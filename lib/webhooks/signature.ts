import { createHmac, randomBytes } from 'node:crypto';
import {
  type DeliveryHeaders,
  type HmacSha256,
  SECRET_PREFIX,
  type StandardSignInput,
  deliveryHeaders as signedWith,
} from '../../sdk/src/webhook-signature.ts';

// The Node side of the one webhook signature scheme (sdk/src/webhook-signature.ts,
// shared with the SDK's `Valise.webhooks.verify`, as the ZIP writer is): the
// server signs with the very code its customers verify with, and the tests of
// every edge run against that code once.

export {
  DEFAULT_TOLERANCE_SECONDS,
  type DeliveryHeaders,
  decodeSecret,
  type IncomingHeaders,
  type LegacySignInput,
  SECRET_PREFIX,
  type StandardSignInput,
  signLegacy,
  signStandard,
  type VerifyOptions,
  verifyLegacy,
  verifyStandard,
  WebhookVerificationError,
} from '../../sdk/src/webhook-signature.ts';

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. Shown to the customer once. */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

const nodeHmacSha256: HmacSha256 = (key, message) => createHmac('sha256', key).update(message).digest();

/**
 * Every header a delivery carries, as the SDK's `deliveryHeaders` makes them, with node:crypto's
 * HMAC: synchronous, and a quarter of WebCrypto's CPU at a thousand deliveries a second.
 */
export function deliveryHeaders(input: Omit<StandardSignInput, 'hmac'>): Promise<DeliveryHeaders> {
  return signedWith({ ...input, hmac: nodeHmacSha256 });
}
