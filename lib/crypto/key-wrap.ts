import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// Server-mode files are encrypted with a random data key of their own; only
// the data key, wrapped by a master key, is stored. Deleting the wrapped key
// shreds the file whatever copies of the blob remain. The wrapped form names
// its master key, so a new master key can become current while keys wrapped
// by the old ones still open (docs/encryption.md, "Master keys").

export type Keyring = { currentId: string; keys: Map<string, Buffer> };

/** Why a wrapped key would not open; the message says it for people. */
export type KeyWrapFailure = 'malformed' | 'unknown-key' | 'integrity';

export class KeyWrapError extends Error {
  override readonly name = 'KeyWrapError';
  readonly reason: KeyWrapFailure;

  constructor(reason: KeyWrapFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}

const KEY_SIZE = 32;
const IV_SIZE = 12;
const TAG_SIZE = 16;
const KEY_ID = /^[a-z0-9-]{1,32}$/;
// Standard or URL-safe alphabet; 32 bytes are 43 characters and an optional '='.
const BASE64_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;

/**
 * Parses `id1:base64key,id2:base64key` (MASTER_KEYS). The current key, which
 * wraps new data keys, is `currentId` (MASTER_KEY_ID) or else the last one
 * listed, so rotating is appending. Messages never quote key material.
 */
export function parseKeyring(spec: string, currentId?: string): Keyring {
  if (spec.trim() === '') throw new Error('The keyring is empty: expected id:base64key[,id:base64key...]');
  const keys = new Map<string, Buffer>();
  const entries = spec.split(',').map((entry) => entry.trim());
  entries.forEach((entry, position) => {
    const where = `keyring entry ${position + 1}`;
    const colon = entry.indexOf(':');
    if (colon < 0) throw new Error(`${where} is not id:base64key`);
    const id = entry.slice(0, colon);
    const encoded = entry.slice(colon + 1);
    if (!KEY_ID.test(id)) throw new Error(`${where}: key id must match [a-z0-9-]{1,32}`);
    if (keys.has(id)) throw new Error(`${where}: key id "${id}" is listed twice`);
    if (!BASE64_KEY.test(encoded)) throw new Error(`${where} ("${id}"): the key must be 32 bytes in base64`);
    // Node's base64 decoder takes either alphabet.
    keys.set(id, Buffer.from(encoded, 'base64'));
  });
  const current = currentId ?? [...keys.keys()].at(-1);
  if (current === undefined || !keys.has(current)) {
    throw new Error(`The current key id "${current}" is not in the keyring`);
  }
  return { currentId: current, keys };
}

export function generateDataKey(): Buffer {
  return randomBytes(KEY_SIZE);
}

/** `v1.<keyId>.<iv>.<ciphertext‖tag>` (base64url); `aad` binds it to its file, e.g. the file id. */
export function wrapDataKey(keyring: Keyring, dataKey: Buffer, aad: string): string {
  if (!(dataKey instanceof Uint8Array) || dataKey.length !== KEY_SIZE) throw new TypeError('dataKey must be 32 bytes');
  const masterKey = keyring.keys.get(keyring.currentId);
  if (!masterKey) throw new Error(`The current key id "${keyring.currentId}" is not in the keyring`);
  const iv = randomBytes(IV_SIZE);
  const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(dataKey), cipher.final(), cipher.getAuthTag()]);
  return ['v1', keyring.currentId, iv.toString('base64url'), body.toString('base64url')].join('.');
}

export function unwrapDataKey(keyring: Keyring, wrapped: string, aad: string): Buffer {
  const { keyId, iv, body } = parseWrapped(wrapped);
  const masterKey = keyring.keys.get(keyId);
  if (!masterKey) throw new KeyWrapError('unknown-key', `Wrapped key uses master key "${keyId}", not in the keyring`);
  const decipher = createDecipheriv('aes-256-gcm', masterKey, iv);
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(body.subarray(KEY_SIZE));
  try {
    return Buffer.concat([decipher.update(body.subarray(0, KEY_SIZE)), decipher.final()]);
  } catch {
    throw new KeyWrapError('integrity', `Wrapped key does not open with master key "${keyId}" (altered, or wrong aad)`);
  }
}

/** The master key a wrapped key depends on: what a rotation job looks for. */
export function wrappedKeyId(wrapped: string): string {
  return parseWrapped(wrapped).keyId;
}

/** Re-wraps under the current master key, so an old one can be retired. */
export function rewrapDataKey(keyring: Keyring, wrapped: string, aad: string): string {
  if (wrappedKeyId(wrapped) === keyring.currentId) return wrapped;
  return wrapDataKey(keyring, unwrapDataKey(keyring, wrapped, aad), aad);
}

function parseWrapped(wrapped: string): { keyId: string; iv: Buffer; body: Buffer } {
  const parts = wrapped.split('.');
  const [version, keyId, iv, body] = parts;
  if (parts.length !== 4 || version !== 'v1' || !keyId || !KEY_ID.test(keyId) || !iv || !body) {
    throw new KeyWrapError('malformed', 'Not a v1 wrapped key');
  }
  const ivBytes = Buffer.from(iv, 'base64url');
  const bodyBytes = Buffer.from(body, 'base64url');
  if (ivBytes.length !== IV_SIZE || bodyBytes.length !== KEY_SIZE + TAG_SIZE) {
    throw new KeyWrapError('malformed', 'Wrapped key has the wrong length');
  }
  return { keyId, iv: ivBytes, body: bodyBytes };
}
