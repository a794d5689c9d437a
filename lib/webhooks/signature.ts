import { randomBytes } from 'node:crypto';
import { constantTimeEqual, hmacSha256 } from '../crypto/secrets.ts';

// Webhook signatures, in the two formats every delivery carries
// (docs/webhooks.md, "Signatures"). Pure: no I/O, and the verifiers take the
// clock as an argument, so every tolerance edge is testable and a receiver can
// check a message against the time it arrived rather than the time it is read.
//
// Standard Webhooks (standardwebhooks.com): HMAC-SHA256 over
// `${id}.${timestamp}.${body}`, base64, as `v1,<sig>`; several space-separated
// signatures during a secret rotation. Legacy `X-Service-Signature`:
// `t=<timestamp>,v1=<hex HMAC-SHA256 over `${timestamp}.${body}`>`, with the
// same key bytes. The legacy form does not cover the id.

export const SECRET_PREFIX = 'whsec_';
export const DEFAULT_TOLERANCE_SECONDS = 300;

// Standard Webhooks asks for at least 24 bytes and allows up to 64; ours are 32.
const MIN_SECRET_BYTES = 24;
const MAX_SECRET_BYTES = 64;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// The id is signed between dots and sent as a header: no dot (the spec forbids
// it, or `a.1` + `2.x` could pass for `a` + `1.2.x`), no space or control byte.
const MESSAGE_ID = /^[\x21-\x2d\x2f-\x7e]{1,255}$/;
// Canonical decimal only (no sign, no leading zero), so the signed text is the header as sent.
const TIMESTAMP = /^(?:0|[1-9]\d{0,14})$/;

/** Why a delivery did not verify; the message says it for people, differently per case. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. Shown to the customer once. */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** The HMAC key of a `whsec_` secret (the prefix is optional, as in the reference library). */
export function decodeSecret(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  // Buffer.from(…, 'base64') skips characters it does not know; a typo must
  // fail here, not become a different key. Messages never quote the secret.
  if (encoded === '' || !BASE64.test(encoded)) throw new Error('Malformed webhook secret: expected whsec_<base64>');
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) {
    throw new Error(
      `Malformed webhook secret: decodes to ${key.length} bytes, expected ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES}`,
    );
  }
  return key;
}

function checkTimestamp(timestamp: number): void {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new Error('A webhook timestamp is a whole number of seconds since the epoch');
  }
}

function standardDigest(key: Buffer, id: string, timestamp: number | string, payload: string | Buffer): string {
  return hmacSha256(key, Buffer.concat([Buffer.from(`${id}.${timestamp}.`), Buffer.from(payload)])).toString('base64');
}

function legacyDigest(key: Buffer, timestamp: number | string, payload: string | Buffer): string {
  return hmacSha256(key, Buffer.concat([Buffer.from(`${timestamp}.`), Buffer.from(payload)])).toString('hex');
}

export type StandardSignInput = { id: string; timestamp: number; payload: string; secrets: readonly string[] };

/**
 * The `webhook-signature` value: `v1,<base64>` per secret, space-separated, in
 * the order given. During a rotation pass [old, new]; a receiver holding
 * either one finds its match.
 */
export function signStandard({ id, timestamp, payload, secrets }: StandardSignInput): string {
  if (!MESSAGE_ID.test(id)) throw new Error('A webhook id is 1 to 255 printable ASCII characters without dots');
  checkTimestamp(timestamp);
  if (secrets.length === 0) throw new Error('At least one webhook secret is needed to sign');
  return secrets.map((secret) => `v1,${standardDigest(decodeSecret(secret), id, timestamp, payload)}`).join(' ');
}

export type LegacySignInput = { timestamp: number; payload: string; secret: string };

/**
 * The `X-Service-Signature` value: `t=<timestamp>,v1=<hex>`, where the hex is
 * HMAC-SHA256, keyed by the decoded secret bytes, over exactly
 * `${timestamp}.${payload}` (the decimal seconds, one dot, the raw body bytes).
 * The event id is not covered; receivers that can should verify the Standard
 * Webhooks headers instead.
 */
export function signLegacy({ timestamp, payload, secret }: LegacySignInput): string {
  checkTimestamp(timestamp);
  return `t=${timestamp},v1=${legacyDigest(decodeSecret(secret), timestamp, payload)}`;
}

export type DeliveryHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'x-service-signature': string;
  'content-type': 'application/json';
};

/**
 * Every header a delivery carries. `secrets` run oldest first, so rotating is
 * appending: the Standard header is signed with each, the legacy header (one
 * signature only) with the last, the current secret.
 */
export function deliveryHeaders(input: StandardSignInput): DeliveryHeaders {
  const current = input.secrets.at(-1);
  if (current === undefined) throw new Error('At least one webhook secret is needed to sign');
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': signStandard(input),
    'x-service-signature': signLegacy({ timestamp: input.timestamp, payload: input.payload, secret: current }),
    'content-type': 'application/json',
  };
}

export type VerifyOptions = {
  /** The receiver's clock, in seconds since the epoch (not milliseconds). */
  now: number;
  /** How far either way the signed timestamp may be from `now`; inclusive. */
  toleranceSeconds?: number;
};

/** Header values as Node (`req.headers`) or a plain object gives them; names in any case. */
export type IncomingHeaders = Record<string, string | readonly string[] | undefined>;

function lowerCased(headers: IncomingHeaders): Map<string, string | readonly string[] | undefined> {
  return new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function requireHeader(headers: Map<string, string | readonly string[] | undefined>, name: string): string {
  const value = headers.get(name);
  if (value === undefined || value === '') throw new WebhookVerificationError(`Missing ${name} header`);
  if (typeof value !== 'string') throw new WebhookVerificationError(`More than one ${name} header`);
  return value;
}

/** Parses the timestamp and checks it against the clock, edges included. */
function checkFreshness(value: string, header: string, { now, toleranceSeconds }: VerifyOptions): number {
  if (!TIMESTAMP.test(value)) throw new WebhookVerificationError(`Invalid ${header}: not an integer`);
  const timestamp = Number(value);
  const tolerance = toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  // NaN compares false both ways and would let any timestamp through.
  if (!Number.isFinite(now) || !Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError('verify needs a finite `now` (seconds) and a non-negative tolerance');
  }
  if (now - timestamp > tolerance) throw new WebhookVerificationError('Message timestamp too old');
  if (timestamp - now > tolerance) throw new WebhookVerificationError('Message timestamp too new');
  return timestamp;
}

/** Constant-time comparison of the encoded forms; a length difference says nothing secret. */
function sameSignature(expected: string, received: string): boolean {
  return constantTimeEqual(Buffer.from(expected), Buffer.from(received));
}

/** Runs only once a signature matched: the body is trusted from here on. */
function parseVerified(payload: string | Buffer): unknown {
  const text = payload.toString();
  // As the reference library does: a signed empty body verifies and carries nothing.
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('Payload is not valid JSON');
  }
}

/**
 * Verifies a Standard Webhooks delivery against the raw body and returns the
 * parsed JSON. Checks, in order: the three headers, the timestamp (an integer
 * within the tolerance), then any `v1,` signature matching in constant time;
 * other versions (`v1a,` and so on) are skipped. Throws WebhookVerificationError.
 */
export function verifyStandard(
  payload: string | Buffer,
  headers: IncomingHeaders,
  secret: string,
  options: VerifyOptions,
): unknown {
  const key = decodeSecret(secret);
  const normalised = lowerCased(headers);
  const id = requireHeader(normalised, 'webhook-id');
  const timestampValue = requireHeader(normalised, 'webhook-timestamp');
  const signatures = requireHeader(normalised, 'webhook-signature');
  const timestamp = checkFreshness(timestampValue, 'webhook-timestamp', options);
  const expected = standardDigest(key, id, timestamp, payload);
  for (const entry of signatures.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma === -1 || entry.slice(0, comma) !== 'v1') continue;
    if (sameSignature(expected, entry.slice(comma + 1))) return parseVerified(payload);
  }
  throw new WebhookVerificationError('No matching signature found');
}

/**
 * Verifies an `X-Service-Signature` header (`t=…,v1=…`; several `v1=` are
 * accepted, unknown keys skipped) against the raw body; returns the parsed JSON.
 */
export function verifyLegacy(
  payload: string | Buffer,
  header: string | readonly string[] | undefined,
  secret: string,
  options: VerifyOptions,
): unknown {
  const key = decodeSecret(secret);
  if (header === undefined || header === '') throw new WebhookVerificationError('Missing x-service-signature header');
  if (typeof header !== 'string') throw new WebhookVerificationError('More than one x-service-signature header');
  const timestamps: string[] = [];
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const equals = part.indexOf('=');
    if (equals === -1) continue;
    const name = part.slice(0, equals);
    const value = part.slice(equals + 1);
    if (name === 't') timestamps.push(value);
    else if (name === 'v1') signatures.push(value);
  }
  const [timestampValue] = timestamps;
  if (timestamps.length !== 1 || timestampValue === undefined) {
    throw new WebhookVerificationError('Invalid x-service-signature: expected exactly one t=');
  }
  const timestamp = checkFreshness(timestampValue, 'x-service-signature timestamp', options);
  const expected = legacyDigest(key, timestamp, payload);
  if (signatures.some((signature) => sameSignature(expected, signature))) return parseVerified(payload);
  throw new WebhookVerificationError('No matching signature found');
}
