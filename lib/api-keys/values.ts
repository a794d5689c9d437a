import { constantTimeEqual, hmacSha256, randomBase62 } from '../crypto/secrets.ts';
import { ENVIRONMENTS, type Environment, isOneOf, type KeyType } from '../vocabulary.ts';

// Key values: `svc_<env>_` (full), `svc_rk_<env>_` (restricted live/test) or
// `svc_sandbox_` (every sandbox key), then 40 base62 characters (238 bits).
const SECRET_LENGTH = 40;
const KEY_PATTERN = new RegExp(`^svc_(?:(rk)_)?(${ENVIRONMENTS.join('|')})_([0-9A-Za-z]{${SECRET_LENGTH}})$`);

const MINTABLE: Record<Environment, readonly Environment[]> = {
  live: ['live', 'test'],
  test: ['test'],
  sandbox: ['sandbox'],
};

/**
 * The environments a key may create keys in (docs/api-keys.md, "Environments"): a live key live and test keys,
 * a test key test keys, a sandbox key sandbox keys. Never a live key from a test or sandbox key.
 */
export function mintableEnvironments(environment: Environment): readonly Environment[] {
  return MINTABLE[environment];
}

export function keyValuePrefix(environment: Environment, keyType: KeyType): string {
  if (environment === 'sandbox') return 'svc_sandbox_';
  return keyType === 'restricted' ? `svc_rk_${environment}_` : `svc_${environment}_`;
}

export function generateKeyValue(environment: Environment, keyType: KeyType): { value: string; displayPrefix: string } {
  const prefix = keyValuePrefix(environment, keyType);
  const value = prefix + randomBase62(SECRET_LENGTH);
  // What lists show: enough to recognise a key, far too little to use it.
  return { value, displayPrefix: value.slice(0, prefix.length + 6) };
}

/** The environment a well-formed key value claims, or null when malformed. */
export function parseKeyValue(value: string): { environment: Environment; restricted: boolean } | null {
  const match = KEY_PATTERN.exec(value);
  if (!match) return null;
  const environment = match[2];
  const restricted = match[1] === 'rk';
  if (!isOneOf(ENVIRONMENTS, environment) || (restricted && environment === 'sandbox')) return null;
  return { environment, restricted };
}

export function hashKeyValue(pepper: Buffer, value: string): Buffer {
  return hmacSha256(pepper, value);
}

export function sameHash(a: Buffer, b: Buffer): boolean {
  return constantTimeEqual(a, b);
}

export const KEY_SECRET_LENGTH = SECRET_LENGTH;
