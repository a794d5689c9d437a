import { signToken, verifyToken } from '../crypto/signed-token.ts';
import { DomainError } from '../errors.ts';

// An upload URL names one file of one owner (a transfer, an intake document,
// a vault) and needs no API key: the signed token is the capability. The
// kind is the owning family's (its declaration's `uploads.kind`, lib/family.ts),
// and tells lib/uploads/resolve.ts where to look the file up.

export type UploadAddress = { kind: string; owner: string; file: string };

export function signUploadToken(key: Buffer, address: UploadAddress, expiresAt: Date): string {
  // `t` and `f` are the transfer-era names; tokens without `k` are transfers'.
  return signToken(key, 'upload', { k: address.kind, t: address.owner, f: address.file }, expiresAt);
}

/** The address a token names and until when it is valid, or the refusal: 404, or 410 once it has expired. */
export function readUploadToken(key: Buffer, token: string): UploadAddress & { expiresAt: Date } {
  const check = verifyToken(key, 'upload', token);
  if (!check.ok) {
    throw check.reason === 'expired'
      ? new DomainError('not_found', 'This upload URL has expired.', { kind: 'gone' })
      : new DomainError('not_found', 'No such upload URL.');
  }
  const { k: kind = 'transfer', t, f } = check.data;
  if (!kind || !t || !f) throw new DomainError('not_found', 'No such upload URL.');
  return { kind, owner: t, file: f, expiresAt: check.expiresAt };
}
