import { encryptedSize, HEADER_SIZE, TAG_SIZE } from '../crypto/segmented-aead.ts';
import { DomainError } from '../errors.ts';
import type { EncryptionMode } from '../vocabulary.ts';

// How a file is cut into S3 multipart parts. Parts hold whole encryption
// segments, so an interrupted upload resumes at a part boundary, which is
// also a segment boundary: the encryption picks up at the next segment index.
//
// The plan is a pure function of the declared size and the mode, so nothing
// about it is stored: every request of an upload, before and after a deploy,
// cuts the file the same way.

export const SEGMENT_SIZE = 64 * 1024;
/** Plaintext per part while the file fits in `maxParts` of them: 128 segments, 8 MiB. */
export const PART_PLAINTEXT = 128 * SEGMENT_SIZE;

const MiB = 1024 * 1024;
/** S3's multipart limits: parts per upload, bytes per part (all but the last), bytes per object. */
export const S3_LIMITS = {
  maxParts: 10_000,
  minPartBytes: 5 * MiB,
  maxPartBytes: 5 * 1024 * MiB,
  maxObjectBytes: 5 * 1024 ** 4,
};

export type Part = { number: number; plainStart: number; plainEnd: number; blobBytes: number };

/**
 * Plaintext bytes per part for a file of `size` (bytes as declared): 8 MiB while the file fits in
 * `maxParts` of them, as every file was planned before larger files were accepted, otherwise the
 * smallest whole number of segments that does. Whether that plan is acceptable is `planRefusal`'s.
 */
export function partSize(size: number, maxParts: number = S3_LIMITS.maxParts): number {
  if (size <= PART_PLAINTEXT * maxParts) return PART_PLAINTEXT;
  return Math.ceil(size / (maxParts * SEGMENT_SIZE)) * SEGMENT_SIZE;
}

/** Stored bytes of a part holding `plain` bytes of plaintext, the first part carrying the blob's header. */
function blobBytes(plain: number, first: boolean, mode: EncryptionMode): number {
  if (mode === 'e2e') return plain;
  const segments = Math.max(1, Math.ceil(plain / SEGMENT_SIZE));
  return (first ? HEADER_SIZE : 0) + plain + segments * TAG_SIZE;
}

/**
 * The largest file S3 can hold in one object: 5 TiB stored. Server mode stores a 16-byte header
 * and a 16-byte tag per 64 KiB segment besides the plaintext, so its files stop 1.34 GB short.
 */
export function maxFileBytes(mode: EncryptionMode): number {
  if (mode === 'e2e') return S3_LIMITS.maxObjectBytes;
  const room = S3_LIMITS.maxObjectBytes - HEADER_SIZE;
  const wholeSegments = Math.floor(room / (SEGMENT_SIZE + TAG_SIZE));
  // What is left after the whole segments holds one last, shorter segment and its tag.
  return wholeSegments * SEGMENT_SIZE + Math.max(0, room - wholeSegments * (SEGMENT_SIZE + TAG_SIZE) - TAG_SIZE);
}

/**
 * Why a file of `size` cannot be uploaded in parts S3 takes, or null when it can: S3 stores at most
 * 5 TiB per object (sealed, in server mode: `maxFileBytes`), in at most `maxParts` parts of at most
 * 5 GiB each.
 */
export function planRefusal(size: number, mode: EncryptionMode, maxParts: number = S3_LIMITS.maxParts): string | null {
  const largest = maxFileBytes(mode);
  if (size > largest) {
    return `A file holds at most ${largest} bytes (what fits in S3's 5 TiB object${mode === 'e2e' ? '' : ' once sealed'}).`;
  }
  const plain = partSize(size, maxParts);
  if (blobBytes(Math.min(plain, size), true, mode) > S3_LIMITS.maxPartBytes) {
    return `A file of ${size} bytes does not fit in ${maxParts} parts of at most ${S3_LIMITS.maxPartBytes} bytes.`;
  }
  return null;
}

/** Refuses a declared size S3 could not store, naming the request field `param` that declared it. */
export function checkPlannable(size: number, mode: EncryptionMode, maxParts: number, param: string): void {
  const refusal = planRefusal(size, mode, maxParts);
  if (refusal) throw new DomainError('validation_error', refusal, { param });
}

/** Every part of a file of `size`, in order; a file `planRefusal` refuses has no plan. */
export function partPlan(size: number, mode: EncryptionMode, maxParts: number = S3_LIMITS.maxParts): Part[] {
  const refusal = planRefusal(size, mode, maxParts);
  if (refusal) throw new RangeError(refusal);
  const plain = partSize(size, maxParts);
  const count = Math.max(1, Math.ceil(size / plain));
  const parts: Part[] = [];
  for (let index = 0; index < count; index++) {
    const plainStart = index * plain;
    const plainEnd = Math.min(size, plainStart + plain);
    parts.push({
      number: index + 1,
      plainStart,
      plainEnd,
      blobBytes: blobBytes(plainEnd - plainStart, index === 0, mode),
    });
  }
  return parts;
}

export function storedSize(size: number, mode: EncryptionMode): number {
  return mode === 'e2e' ? size : encryptedSize(size, SEGMENT_SIZE);
}
