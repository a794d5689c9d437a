import { randomBytes } from 'node:crypto';
import { SECRET_PREFIX } from '../../sdk/src/webhook-signature.ts';

// The Node side of the one webhook signature scheme (sdk/src/webhook-signature.ts,
// shared with the SDK's `Valise.webhooks.verify`, as the ZIP writer is): the
// server signs with the very code its customers verify with, and the tests of
// every edge run against that code once.

export {
  DEFAULT_TOLERANCE_SECONDS,
  type DeliveryHeaders,
  decodeSecret,
  deliveryHeaders,
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
