import type { IntakeKem } from './vocabulary.ts';

/**
 * The sizes each KEM gives an intake's keys and envelopes (docs/intake-encryption.md, "Keys" and
 * "Wrapping the content key"): the owner's public key, and HPKE's encapsulated key `enc`.
 */
export const KEM_SIZES: Readonly<Record<IntakeKem, { publicKey: number; enc: number }>> = {
  'MLKEM768-X25519': { publicKey: 1216, enc: 1120 },
  'DHKEM-X25519': { publicKey: 32, enc: 32 },
};

/** The sealed content key: 32 bytes and a 16-byte tag. The wrapped key is `enc` followed by it. */
export const SEALED_KEY_BYTES = 48;
