import { ENC_BYTES, INTAKE_KEMS, type IntakeKem, unwrapContentKey, wrapContentKey } from './crypto/intake-envelope.ts';
import { deriveFileKey } from './crypto/link-key.ts';
import { DEFAULT_SEGMENT_SIZE, generateKey, generateNoncePrefix } from './crypto/val1.ts';
import { base64Decode, base64UrlEncode } from './encoding.ts';
import { ValiseError } from './errors.ts';
import type { FileSource } from './sources.ts';
import type { IntakeDocument, IntakeForm, StartSubmissionParams } from './types.ts';
import type { E2eMaterial } from './upload.ts';

// The submitter's and the owner's halves of an end-to-end intake
// (docs/intake-encryption.md, docs/intakes.md): a fresh content key per
// document, wrapped to the owner's public key; each file sealed in VAL1 with
// a key derived from the content key and the file's id.

/** What a submission needs before any byte leaves: the body to send, and the key material to seal each file. */
export type SealedSubmission = {
  files: StartSubmissionParams['files'];
  envelope: StartSubmissionParams['envelope'];
  /** Per file (same order): the material to encrypt it once its id is known; null for server-mode intakes. */
  seal: ((fileId: string, index: number) => Promise<E2eMaterial>) | null;
};

export async function sealSubmission(form: IntakeForm, sources: FileSource[]): Promise<SealedSubmission> {
  const files = sources.map((source) => ({
    name: source.name,
    size: source.size,
    ...(source.type ? { mime_type: source.type } : {}),
  }));
  const owner = form.owner_public_key;
  if (form.encryption_mode !== 'e2e_asym' || !owner) return { files, envelope: undefined, seal: null };
  const kem = owner.kem as IntakeKem;
  const contentKey = generateKey();
  const wrapped = await wrapContentKey({
    kem,
    publicKey: base64Decode(owner.public_key),
    contentKey,
    intakeId: form.id,
  });
  const noncePrefixes = sources.map(() => generateNoncePrefix());
  return {
    files: files.map((file, index) => ({ ...file, iv: base64UrlEncode(noncePrefixes[index] ?? new Uint8Array()) })),
    envelope: {
      kem,
      wrapped_symmetric_key: base64UrlEncode(concat(wrapped.enc, wrapped.wrappedKey)),
      chunk_size: DEFAULT_SEGMENT_SIZE,
    },
    seal: async (fileId, index) => ({
      key: await deriveFileKey(contentKey, fileId),
      noncePrefix: noncePrefixes[index] ?? generateNoncePrefix(),
      segmentSize: DEFAULT_SEGMENT_SIZE,
    }),
  };
}

/**
 * Opens an end-to-end document's envelope with the intake's private key: a function giving each
 * file's VAL1 key. Throws `integrity_error` when the key is not this intake's, or the envelope was altered.
 */
export async function openDocumentKeys(
  document: IntakeDocument,
  privateKey: Uint8Array,
): Promise<(fileId: string) => Promise<Uint8Array<ArrayBuffer>>> {
  const { kem, wrapped_symmetric_key: wrappedKey } = document.encryption;
  if (!kem || !wrappedKey || !(INTAKE_KEMS as readonly string[]).includes(kem)) {
    throw new ValiseError({ code: 'integrity_error', message: `Document ${document.id} has no envelope to open.` });
  }
  const wrapped = base64Decode(wrappedKey);
  const encBytes = ENC_BYTES[kem as IntakeKem];
  let contentKey: Uint8Array<ArrayBuffer>;
  try {
    contentKey = new Uint8Array(
      await unwrapContentKey({
        kem: kem as IntakeKem,
        privateKey,
        enc: wrapped.subarray(0, encBytes),
        wrappedKey: wrapped.subarray(encBytes),
        intakeId: document.intake_id,
      }),
    );
  } catch (cause) {
    throw new ValiseError({
      code: 'integrity_error',
      message: 'This private key does not open the document: another intake\u2019s key, or an altered envelope.',
      cause,
    });
  }
  return (fileId) => deriveFileKey(contentKey, fileId);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
