import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

// One operator secret (VALISE_SECRET) is stretched into independent keys, one
// per purpose, so that no key does two jobs.
export type KeyPurpose =
  | 'api-key-hash'
  | 'cursor'
  | 'seal'
  | 'link-token'
  | 'idempotency-seal'
  | 'idempotency-fingerprint';

export function deriveKey(secret: string, purpose: KeyPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'valise', `valise:${purpose}`, 32));
}

// createHmac turns a Buffer key into a KeyObject on every call, which costs several times the HMAC
// of a key value itself; derived keys live as long as the process, so each is turned once.
const keyObjects = new WeakMap<Buffer, KeyObject>();

export function hmacSha256(key: Buffer, data: string | Buffer): Buffer {
  let keyObject = keyObjects.get(key);
  if (!keyObject) {
    keyObject = createSecretKey(key);
    keyObjects.set(key, keyObject);
  }
  return createHmac('sha256', keyObject).update(data).digest();
}

export function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniformly random base62 string (rejection sampling keeps it unbiased). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/**
 * AES-256-GCM sealing for small secrets kept in the database (TOTP seeds,
 * idempotent responses). `associatedData`, when given, binds the sealed value
 * to its context (the row it belongs to): it must be the same to unseal.
 */
export function seal(key: Buffer, plaintext: string, associatedData?: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (associatedData !== undefined) cipher.setAAD(Buffer.from(associatedData, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join(
    '.',
  );
}

export function unseal(key: Buffer, sealed: string, associatedData?: string): string {
  const [version, iv, body, tag] = sealed.split('.');
  if (version !== 'v1' || !iv || !body || !tag) throw new Error('Unrecognised sealed value');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
  if (associatedData !== undefined) decipher.setAAD(Buffer.from(associatedData, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}
