import { constantTimeEqual, hmacSha256 } from '../crypto/secrets.ts';
import { DomainError } from '../errors.ts';

// The payment processor's webhook signature (Stripe's `Stripe-Signature`, docs/billing.md):
// `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, each v1 an HMAC-SHA256 over `<t>.<raw body>` keyed by
// an endpoint secret. During a rotation the processor signs with the old and the new secret,
// and several secrets may be configured here: one match of any v1 with any secret suffices.

export const SIGNATURE_HEADER = 'stripe-signature';
export const SIGNATURE_TOLERANCE_SECONDS = 300;

const refused = (message: string) => new DomainError('validation_error', message, { param: 'Stripe-Signature' });

type ParsedHeader = { timestamp: number; signatures: Buffer[] };

function parseHeader(header: string | undefined): ParsedHeader {
  if (!header || header.length > 4096) throw refused('The `Stripe-Signature` header is missing.');
  let timestamp: number | null = null;
  const signatures: Buffer[] = [];
  for (const item of header.split(',')) {
    const [key, value, ...rest] = item.trim().split('=');
    if (rest.length > 0 || value === undefined) continue;
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  if (timestamp === null || signatures.length === 0) {
    throw refused('The `Stripe-Signature` header has no timestamp `t` or no `v1` signature.');
  }
  return { timestamp, signatures };
}

/**
 * Verifies a delivery before anything reads it: its timestamp within 5 minutes of now (either way),
 * and one of its v1 signatures made over the raw body with one of `secrets`. Throws 400
 * `validation_error` (param `Stripe-Signature`) otherwise.
 */
export function verifyProcessorSignature(
  body: Buffer,
  header: string | undefined,
  secrets: readonly string[],
  now = Date.now(),
): void {
  const { timestamp, signatures } = parseHeader(header);
  if (Math.abs(now / 1000 - timestamp) > SIGNATURE_TOLERANCE_SECONDS) {
    throw refused('The `Stripe-Signature` timestamp is more than 5 minutes away from now.');
  }
  const signed = Buffer.concat([Buffer.from(`${timestamp}.`), body]);
  // Every comparison is made, whichever matches, so the time taken tells nothing.
  let matched = false;
  for (const secret of secrets) {
    const expected = hmacSha256(Buffer.from(secret, 'utf8'), signed);
    for (const signature of signatures) matched = constantTimeEqual(expected, signature) || matched;
  }
  if (!matched) throw refused('No `Stripe-Signature` v1 signature matches the endpoint secret.');
}
