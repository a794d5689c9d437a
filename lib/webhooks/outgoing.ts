import { unseal } from '../crypto/secrets.ts';
import type { EventRow } from '../db/queries/events.ts';
import type { WebhookRow } from '../db/queries/webhooks.ts';

// What every outgoing delivery is made of, whoever sends it: the sender's first
// attempts (lib/webhooks/sender.ts), the workflow's retries, test pings and
// redeliveries (activities/webhooks.ts), and rule actions (activities/rules.ts).

/** The signed envelope (spec, Events: Delivery envelope); the same bytes on every attempt. */
export function envelopeOf(event: Pick<EventRow, 'id' | 'type' | 'data' | 'created_at'>): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    timestamp: event.created_at.toISOString(),
    data: event.data,
  });
}

export type SigningKeys = Pick<WebhookRow, 'secret_sealed' | 'previous_secret_sealed' | 'previous_secret_expires_at'>;

/** Oldest first: during a rotation the previous secret signs too, until it expires. */
export function signingSecrets(hook: SigningKeys, key: Buffer, now: Date): string[] {
  const current = unseal(key, hook.secret_sealed);
  const previousValid =
    hook.previous_secret_sealed !== null &&
    hook.previous_secret_expires_at !== null &&
    hook.previous_secret_expires_at > now;
  return previousValid && hook.previous_secret_sealed ? [unseal(key, hook.previous_secret_sealed), current] : [current];
}
