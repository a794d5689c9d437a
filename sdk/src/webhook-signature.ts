import { base64Encode, utf8 } from './encoding.ts';
import { InvalidArgumentError, ValiseError } from './errors.ts';

// Webhook signatures, in the two formats every delivery carries
// (docs/webhooks.md, "Signatures"): the one implementation, used by the server
// to sign (lib/webhooks/signature.ts) and by customers to verify
// (`Valise.webhooks.verify`). It imports nothing but WebCrypto, so it runs in
// Node, Deno, Bun, workers and browsers alike; that makes it asynchronous. The
// server passes node:crypto's HMAC instead (`HmacSha256`): a quarter of the CPU
// per delivery, and no trip through the thread pool.
// The verifiers take the clock as an argument, so every tolerance edge is
// testable and a receiver can check a message against the time it arrived.
//
// Standard Webhooks (standardwebhooks.com): HMAC-SHA256 over
// `${id}.${timestamp}.${body}`, base64, as `v1,<sig>`; several space-separated
// signatures during a secret rotation. Legacy `X-Service-Signature`:
// `t=<timestamp>,v1=<hex HMAC-SHA256 over `${timestamp}.${body}`>`, with the
// same key bytes. The legacy form does not cover the id.

export const SECRET_PREFIX = 'whsec_';
/** |now − timestamp| ≤ 300 seconds passes; 301 fails (docs/webhooks.md, "Tolerance"). */
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
export class WebhookVerificationError extends ValiseError {
  constructor(message: string) {
    super({ code: 'webhook_verification_failed', message });
  }
}

/** The raw body exactly as received: a string, or its bytes (a Node Buffer is a Uint8Array). */
export type WebhookPayload = string | Uint8Array;

/** The HMAC key bytes of a `whsec_` secret (the prefix is optional, as in the reference library). */
export function decodeSecret(secret: string): Uint8Array<ArrayBuffer> {
  if (typeof secret !== 'string') throw new InvalidArgumentError('secret', 'expected a whsec_<base64> string');
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  // atob, like Buffer.from(…, 'base64'), is lenient about what it skips; a
  // typo must fail here, not become a different key. Messages never quote the secret.
  if (encoded === '' || !BASE64.test(encoded)) {
    throw new InvalidArgumentError('secret', 'Malformed webhook secret: expected whsec_<base64>');
  }
  const binary = atob(encoded);
  const key = Uint8Array.from(binary, (character) => character.charCodeAt(0));
  if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES) {
    throw new InvalidArgumentError(
      'secret',
      `Malformed webhook secret: decodes to ${key.length} bytes, expected ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES}`,
    );
  }
  return key;
}

function checkTimestamp(timestamp: number): void {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new InvalidArgumentError('timestamp', 'A webhook timestamp is a whole number of seconds since the epoch');
  }
}

function bytesOf(payload: WebhookPayload): Uint8Array {
  return typeof payload === 'string' ? utf8.encode(payload) : payload;
}

/**
 * HMAC-SHA256 of `message` under `key`. The default is WebCrypto's, which runs everywhere; a signer
 * that has a synchronous one (the server, node:crypto's) passes it to the sign functions.
 */
export type HmacSha256 = (key: Uint8Array<ArrayBuffer>, message: Uint8Array) => Uint8Array | Promise<Uint8Array>;

const webCryptoHmacSha256: HmacSha256 = async (key, message) => {
  const cryptoKey = await globalThis.crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  return new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', cryptoKey, message as Uint8Array<ArrayBuffer>));
};

async function hmacSha256(
  key: Uint8Array<ArrayBuffer>,
  prefix: string,
  payload: WebhookPayload,
  hmac: HmacSha256 = webCryptoHmacSha256,
): Promise<Uint8Array> {
  const head = utf8.encode(prefix);
  const body = bytesOf(payload);
  const message = new Uint8Array(head.length + body.length);
  message.set(head, 0);
  message.set(body, head.length);
  return hmac(key, message);
}

async function standardDigest(
  key: Uint8Array<ArrayBuffer>,
  id: string,
  timestamp: number,
  payload: WebhookPayload,
  hmac?: HmacSha256,
) {
  return base64Encode(await hmacSha256(key, `${id}.${timestamp}.`, payload, hmac));
}

async function legacyDigest(
  key: Uint8Array<ArrayBuffer>,
  timestamp: number,
  payload: WebhookPayload,
  hmac?: HmacSha256,
) {
  const digest = await hmacSha256(key, `${timestamp}.`, payload, hmac);
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

export type StandardSignInput = {
  id: string;
  timestamp: number;
  payload: WebhookPayload;
  secrets: readonly string[];
  /** WebCrypto's when absent. */
  hmac?: HmacSha256;
};

/**
 * The `webhook-signature` value: `v1,<base64>` per secret, space-separated, in
 * the order given. During a rotation pass [old, new]; a receiver holding
 * either one finds its match.
 */
export async function signStandard({ id, timestamp, payload, secrets, hmac }: StandardSignInput): Promise<string> {
  if (!MESSAGE_ID.test(id)) {
    throw new InvalidArgumentError('id', 'A webhook id is 1 to 255 printable ASCII characters without dots');
  }
  checkTimestamp(timestamp);
  if (secrets.length === 0) throw new InvalidArgumentError('secrets', 'At least one webhook secret is needed to sign');
  const keys = secrets.map(decodeSecret);
  const digests = await Promise.all(keys.map((key) => standardDigest(key, id, timestamp, payload, hmac)));
  return digests.map((digest) => `v1,${digest}`).join(' ');
}

export type LegacySignInput = { timestamp: number; payload: WebhookPayload; secret: string; hmac?: HmacSha256 };

/**
 * The `X-Service-Signature` value: `t=<timestamp>,v1=<hex>`, where the hex is
 * HMAC-SHA256, keyed by the decoded secret bytes, over exactly
 * `${timestamp}.${payload}` (the decimal seconds, one dot, the raw body bytes).
 * The event id is not covered; receivers that can should verify the Standard
 * Webhooks headers instead.
 */
export async function signLegacy({ timestamp, payload, secret, hmac }: LegacySignInput): Promise<string> {
  checkTimestamp(timestamp);
  return `t=${timestamp},v1=${await legacyDigest(decodeSecret(secret), timestamp, payload, hmac)}`;
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
export async function deliveryHeaders(input: StandardSignInput): Promise<DeliveryHeaders> {
  const current = input.secrets.at(-1);
  if (current === undefined) {
    throw new InvalidArgumentError('secrets', 'At least one webhook secret is needed to sign');
  }
  return {
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestamp),
    'webhook-signature': await signStandard(input),
    'x-service-signature': await signLegacy({
      timestamp: input.timestamp,
      payload: input.payload,
      secret: current,
      ...(input.hmac ? { hmac: input.hmac } : {}),
    }),
    'content-type': 'application/json',
  };
}

export type VerifyOptions = {
  /**
   * The receiver's clock: a Date, or milliseconds since the epoch as `Date.now()` gives them (the
   * time the delivery arrived, for a receiver that verifies later).
   */
  now: Date | number;
  /** How far either way the signed timestamp may be from `now`, in seconds; inclusive. Default 300. */
  toleranceSeconds?: number | undefined;
};

/** Header values as Node (`req.headers`), a plain object or a fetch `Headers` gives them; names in any case. */
export type IncomingHeaders = Headers | Record<string, string | readonly string[] | undefined>;

type HeaderValue = string | readonly string[] | undefined;

function lowerCased(headers: IncomingHeaders): Map<string, HeaderValue> {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return new Map(headers.entries());
  return new Map(Object.entries(headers as Record<string, HeaderValue>).map(([name, v]) => [name.toLowerCase(), v]));
}

function requireHeader(headers: Map<string, HeaderValue>, name: string): string {
  const value = headers.get(name);
  if (value === undefined || value === '') throw new WebhookVerificationError(`Missing ${name} header`);
  if (typeof value !== 'string') throw new WebhookVerificationError(`More than one ${name} header`);
  return value;
}

type Clock = { nowSeconds: number; tolerance: number };

/** The options as whole seconds, checked: NaN compares false both ways and would let any timestamp through. */
function clockOf(options: VerifyOptions): Clock {
  const { now, toleranceSeconds } = options ?? {};
  const nowMs = now instanceof Date ? now.getTime() : now;
  const tolerance = toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (typeof nowMs !== 'number' || !Number.isFinite(nowMs)) {
    throw new InvalidArgumentError('now', 'expected a Date or milliseconds since the epoch (Date.now())');
  }
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0) {
    throw new InvalidArgumentError('toleranceSeconds', 'expected a non-negative number of seconds');
  }
  return { nowSeconds: Math.floor(nowMs / 1000), tolerance };
}

/** Parses the timestamp and checks it against the clock, edges included. */
function checkFreshness(value: string, header: string, { nowSeconds, tolerance }: Clock): number {
  if (!TIMESTAMP.test(value)) throw new WebhookVerificationError(`Invalid ${header}: not an integer`);
  const timestamp = Number(value);
  if (nowSeconds - timestamp > tolerance) throw new WebhookVerificationError('Message timestamp too old');
  if (timestamp - nowSeconds > tolerance) throw new WebhookVerificationError('Message timestamp too new');
  return timestamp;
}

/**
 * Constant-time comparison of the encoded forms, as the reference library does; a length
 * difference says nothing secret.
 */
function sameSignature(expected: string, received: string): boolean {
  const a = utf8.encode(expected);
  const b = utf8.encode(received);
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] as number) ^ (b[i] as number);
  return difference === 0;
}

/**
 * Runs only once a signature matched: the body is trusted from here on. Every Valise delivery is
 * a JSON event, so a signed empty body (which the reference library returns as `undefined`) is
 * refused with its own message rather than handed on as an event that is not there.
 */
function parseVerified(payload: WebhookPayload): unknown {
  const text = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  if (text === '') throw new WebhookVerificationError('Signed payload is empty: no event to return');
  try {
    return JSON.parse(text);
  } catch {
    throw new WebhookVerificationError('Payload is not valid JSON');
  }
}

function secretsOf(secret: string | readonly string[]): Uint8Array<ArrayBuffer>[] {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(secrets) || secrets.length === 0) {
    throw new InvalidArgumentError('secret', 'expected a whsec_ secret, or a non-empty array of them');
  }
  return secrets.map(decodeSecret);
}

/**
 * Verifies a Standard Webhooks delivery against the raw body and returns the
 * parsed JSON. Checks, in order: the secrets and the clock, the three headers, the timestamp
 * (an integer within the tolerance), then any `v1,` signature matching in
 * constant time; other versions (`v1a,` and so on) are skipped. Several
 * secrets may be given during a rotation; any one matching is enough. Throws
 * WebhookVerificationError.
 */
export async function verifyStandard(
  payload: WebhookPayload,
  headers: IncomingHeaders,
  secret: string | readonly string[],
  options: VerifyOptions,
): Promise<unknown> {
  const keys = secretsOf(secret);
  const clock = clockOf(options);
  const normalised = lowerCased(headers);
  const id = requireHeader(normalised, 'webhook-id');
  const timestampValue = requireHeader(normalised, 'webhook-timestamp');
  const signatures = requireHeader(normalised, 'webhook-signature');
  const timestamp = checkFreshness(timestampValue, 'webhook-timestamp', clock);
  const entries = signatures.split(' ').flatMap((entry) => {
    const comma = entry.indexOf(',');
    return comma !== -1 && entry.slice(0, comma) === 'v1' ? [entry.slice(comma + 1)] : [];
  });
  for (const key of keys) {
    const expected = await standardDigest(key, id, timestamp, payload);
    if (entries.some((entry) => sameSignature(expected, entry))) return parseVerified(payload);
  }
  throw new WebhookVerificationError('No matching signature found');
}

/**
 * Verifies an `X-Service-Signature` header (`t=…,v1=…`; several `v1=` are
 * accepted, unknown keys skipped) against the raw body; returns the parsed JSON.
 */
export async function verifyLegacy(
  payload: WebhookPayload,
  header: string | readonly string[] | undefined,
  secret: string | readonly string[],
  options: VerifyOptions,
): Promise<unknown> {
  const keys = secretsOf(secret);
  const clock = clockOf(options);
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
  const timestamp = checkFreshness(timestampValue, 'x-service-signature timestamp', clock);
  for (const key of keys) {
    const expected = await legacyDigest(key, timestamp, payload);
    if (signatures.some((signature) => sameSignature(expected, signature))) return parseVerified(payload);
  }
  throw new WebhookVerificationError('No matching signature found');
}
