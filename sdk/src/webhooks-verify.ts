import { base64Decode, utf8 } from './encoding.ts';
import { ValiseError } from './errors.ts';
import type { EventDataByType } from './generated/events.ts';

// Verifies a webhook delivery the way the Standard Webhooks specification (and
// the `standardwebhooks` package) does, with WebCrypto so it runs anywhere:
// HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{raw body}`, keyed by the
// base64-decoded secret after `whsec_`, and a timestamp within 5 minutes of now.

/** |now − webhook-timestamp| ≤ 300 seconds passes; 301 fails (docs/webhooks.md, "Tolerance"). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export type VerifyOptions = {
  /** The clock to compare against; default now. */
  now?: Date | number;
  toleranceSeconds?: number;
};

export class WebhookVerificationError extends ValiseError {
  constructor(message: string) {
    super({ code: 'webhook_verification_failed', message });
  }
}

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
 * rotation window; any one matching is enough. Throws WebhookVerificationError.
 */
export async function verifyWebhook<T = WebhookEvent>(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): Promise<T> {
  const id = header(headers, 'webhook-id');
  const timestampText = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestampText || !signatures) throw new WebhookVerificationError('Missing required headers');

  if (!/^\d+$/.test(timestampText)) throw new WebhookVerificationError('Invalid signature headers');
  const timestamp = Number(timestampText);
  const now = Math.floor(Number(options.now ?? Date.now()) / 1000);
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  if (now - timestamp > tolerance) throw new WebhookVerificationError('Message timestamp too old');
  if (timestamp - now > tolerance) throw new WebhookVerificationError('Message timestamp too new');

  const body = typeof payload === 'string' ? utf8.encode(payload) : payload;
  const signed = concat(utf8.encode(`${id}.${timestampText}.`), body);
  const candidates = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => entry.slice(3));
  for (const key of await Promise.all((typeof secret === 'string' ? [secret] : secret).map(importSecret))) {
    for (const candidate of candidates) {
      const expected = decodeSignature(candidate);
      // subtle.verify compares in constant time.
      if (expected && (await globalThis.crypto.subtle.verify('HMAC', key, expected, signed))) {
        return JSON.parse(typeof payload === 'string' ? payload : new TextDecoder().decode(payload)) as T;
      }
    }
  }
  throw new WebhookVerificationError('No matching signature found');
}

function importSecret(secret: string): Promise<CryptoKey> {
  let key: Uint8Array<ArrayBuffer>;
  try {
    key = base64Decode(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  } catch {
    throw new WebhookVerificationError('The secret is not `whsec_` followed by base64');
  }
  return globalThis.crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
}

function decodeSignature(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    return base64Decode(text);
  } catch {
    return null; // a malformed entry matches nothing; another entry may still match
  }
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(entry) ? entry.join(' ') : entry;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
