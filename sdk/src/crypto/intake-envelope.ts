import { Aes256Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from '@hpke/core';
import { XWing } from '@hpke/hybridkem-x-wing';

// The key envelope of end-to-end intakes (docs/intake-encryption.md): a
// submitter wraps each document's random content key to the intake owner's
// public key with HPKE (RFC 9180, base mode, HKDF-SHA256, AES-256-GCM), so
// only the holder of the private key can open it. The server stores the
// envelope and never holds a key that opens it.

/**
 * The KEMs an intake key may use: X-Wing (MLKEM768-X25519, post-quantum
 * hybrid), the default, and DHKEM(X25519, HKDF-SHA256) for compatibility.
 */
export const INTAKE_KEMS = ['MLKEM768-X25519', 'DHKEM-X25519'] as const;
export type IntakeKem = (typeof INTAKE_KEMS)[number];
export const DEFAULT_INTAKE_KEM: IntakeKem = 'MLKEM768-X25519';

/** HPKE's encapsulated key `enc`, by KEM: a wrapped key is `enc` followed by the 48-byte sealed key. */
export const ENC_BYTES: Readonly<Record<IntakeKem, number>> = { 'MLKEM768-X25519': 1120, 'DHKEM-X25519': 32 };

/** A content key is an AES-256 key. */
export const CONTENT_KEY_BYTES = 32;

export type IntakeKeyPair = { kem: IntakeKem; publicKey: Uint8Array; privateKey: Uint8Array };
export type WrappedContentKey = { kem: IntakeKem; enc: Uint8Array; wrappedKey: Uint8Array };

function suiteOf(kem: IntakeKem): CipherSuite {
  return new CipherSuite({
    kem: kem === 'MLKEM768-X25519' ? new XWing() : new DhkemX25519HkdfSha256(),
    kdf: new HkdfSha256(),
    aead: new Aes256Gcm(),
  });
}

/**
 * HPKE `info`: binds an envelope to its intake, so a wrapped key copied into
 * another intake's document does not open there.
 */
export function envelopeInfo(intakeId: string): Uint8Array {
  return new TextEncoder().encode(`valise intake v1\n${intakeId}`);
}

/** A fresh key pair; the private key is the KEM's 32-byte seed (X-Wing) or X25519 scalar. */
export async function generateIntakeKeyPair(kem: IntakeKem = DEFAULT_INTAKE_KEM): Promise<IntakeKeyPair> {
  const suite = suiteOf(kem);
  const pair = await suite.kem.generateKeyPair();
  return {
    kem,
    publicKey: new Uint8Array(await suite.kem.serializePublicKey(pair.publicKey)),
    privateKey: new Uint8Array(await suite.kem.serializePrivateKey(pair.privateKey)),
  };
}

/** Wraps a content key to the intake owner's public key. */
export async function wrapContentKey(input: {
  kem: IntakeKem;
  publicKey: Uint8Array;
  contentKey: Uint8Array;
  intakeId: string;
}): Promise<WrappedContentKey> {
  if (input.contentKey.length !== CONTENT_KEY_BYTES) throw new RangeError('A content key is 32 bytes.');
  const suite = suiteOf(input.kem);
  const sealed = await suite.seal(
    { recipientPublicKey: await suite.kem.deserializePublicKey(input.publicKey), info: envelopeInfo(input.intakeId) },
    input.contentKey,
  );
  return { kem: input.kem, enc: new Uint8Array(sealed.enc), wrappedKey: new Uint8Array(sealed.ct) };
}

/** Opens a wrapped content key with the intake's private key; throws when it is not this intake's, or altered. */
export async function unwrapContentKey(input: {
  kem: IntakeKem;
  privateKey: Uint8Array;
  enc: Uint8Array;
  wrappedKey: Uint8Array;
  intakeId: string;
}): Promise<Uint8Array> {
  const suite = suiteOf(input.kem);
  const opened = await suite.open(
    {
      recipientKey: await suite.kem.deserializePrivateKey(input.privateKey),
      enc: input.enc,
      info: envelopeInfo(input.intakeId),
    },
    input.wrappedKey,
  );
  return new Uint8Array(opened);
}
