import { constantTimeEqual, hmacSha256 } from './secrets.ts';

// Capability tokens for URLs that carry no API key (upload and download
// links): a purpose, a payload and an expiry, signed with HMAC-SHA256.
// Verification checks the signature before reading anything else.

/**
 * Every purpose a token may carry, by purpose, with what its links are for: a token signed for
 * one is refused for any other. The purposes shared by several families are declared here; a
 * family declares its own in its folder (lib/<family>/family.ts), adding members to this
 * interface:
 *
 *     declare module '../crypto/signed-token.ts' {
 *       interface TokenPurposes { 'vault-download': "a vault item's download link" }
 *     }
 *
 * Two families declaring one purpose with different descriptions do not compile.
 */
export interface TokenPurposes {
  /** lib/uploads/tokens.ts: every family that takes uploads (its kind is in the payload). */
  upload: 'an upload URL';
  /** lib/zip/archives.ts: transfers and collections. */
  archive: 'a download-all ZIP link';
}

export type TokenPurpose = keyof TokenPurposes;

export function signToken(key: Buffer, purpose: TokenPurpose, data: Record<string, string>, expiresAt: Date): string {
  const body = Buffer.from(JSON.stringify({ p: purpose, e: Math.floor(expiresAt.getTime() / 1000), d: data })).toString(
    'base64url',
  );
  return `${body}.${hmacSha256(key, body).toString('base64url')}`;
}

export type TokenCheck =
  | { ok: true; data: Record<string, string>; expiresAt: Date }
  | { ok: false; reason: 'invalid' | 'expired' };

export function verifyToken(key: Buffer, purpose: TokenPurpose, token: string, nowMs = Date.now()): TokenCheck {
  const [body, signature, extra] = token.split('.');
  if (!body || !signature || extra !== undefined) return { ok: false, reason: 'invalid' };
  if (!constantTimeEqual(hmacSha256(key, body), Buffer.from(signature, 'base64url')))
    return { ok: false, reason: 'invalid' };
  let parsed: { p?: unknown; e?: unknown; d?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'invalid' };
  }
  if (parsed.p !== purpose || typeof parsed.e !== 'number' || typeof parsed.d !== 'object' || parsed.d === null) {
    return { ok: false, reason: 'invalid' };
  }
  if (parsed.e * 1000 <= nowMs) return { ok: false, reason: 'expired' };
  return { ok: true, data: parsed.d as Record<string, string>, expiresAt: new Date(parsed.e * 1000) };
}
