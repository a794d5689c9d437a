import { createHmac, randomBytes } from 'node:crypto';
import { constantTimeEqual } from './secrets.ts';

// RFC 6238 TOTP: HMAC-SHA-1, 6 digits, 30-second steps, one step of drift
// either way, the parameters every authenticator app uses by default.

export const TOTP_STEP_MS = 30_000;
const DIGITS = 6;
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function generateTotpSecret(): string {
  return base32Encode(randomBytes(20));
}

/** The time step (counter) of an instant. */
export function totpStep(atMs: number): number {
  return Math.floor(atMs / TOTP_STEP_MS);
}

export function totpCode(secretBase32: string, atMs: number): string {
  return hotp(base32Decode(secretBase32), totpStep(atMs));
}

/**
 * The time step whose code `code` is, within one step of drift either way (the latest if several match), or
 * null. The caller must still refuse a step it has already accepted (RFC 6238 section 5.2).
 */
export function matchTotpStep(secretBase32: string, code: string, nowMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const key = base32Decode(secretBase32);
  const step = totpStep(nowMs);
  let matched: number | null = null;
  // Check every window without returning early, so timing says nothing.
  for (const drift of [-1, 0, 1]) {
    if (constantTimeEqual(Buffer.from(hotp(key, step + drift)), Buffer.from(code))) matched = step + drift;
  }
  return matched;
}

export function verifyTotp(secretBase32: string, code: string, nowMs: number): boolean {
  return matchTotpStep(secretBase32, code, nowMs) !== null;
}

function hotp(key: Buffer, counter: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const digest = createHmac('sha1', key).update(message).digest();
  const offset = (digest.at(-1) ?? 0) & 0x0f;
  const binary = digest.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** DIGITS).padStart(DIGITS, '0');
}

export function base32Encode(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Buffer {
  const clean = text.toUpperCase().replace(/=+$/, '').replace(/\s+/g, '');
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index === -1) throw new Error('Invalid base32 character');
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}
