import { encryptedSize, HEADER_SIZE, TAG_SIZE } from '../crypto/segmented-aead.ts';
import type { EncryptionMode } from '../vocabulary.ts';

// How a file is cut into S3 multipart parts. Parts hold whole encryption
// segments, so an interrupted upload resumes at a part boundary, which is
// also a segment boundary: the encryption picks up at the next segment index.

export const SEGMENT_SIZE = 64 * 1024;
/** Plaintext per part: 128 segments, 8 MiB (S3 wants at least 5 MiB per part but the last). */
export const PART_PLAINTEXT = 128 * SEGMENT_SIZE;

export type Part = { number: number; plainStart: number; plainEnd: number; blobBytes: number };

export function partPlan(size: number, mode: EncryptionMode): Part[] {
  const count = Math.max(1, Math.ceil(size / PART_PLAINTEXT));
  const parts: Part[] = [];
  for (let index = 0; index < count; index++) {
    const plainStart = index * PART_PLAINTEXT;
    const plainEnd = Math.min(size, plainStart + PART_PLAINTEXT);
    const plain = plainEnd - plainStart;
    const segments = Math.max(1, Math.ceil(plain / SEGMENT_SIZE));
    const blobBytes = mode === 'e2e' ? plain : (index === 0 ? HEADER_SIZE : 0) + plain + segments * TAG_SIZE;
    parts.push({ number: index + 1, plainStart, plainEnd, blobBytes });
  }
  return parts;
}

export function storedSize(size: number, mode: EncryptionMode): number {
  return mode === 'e2e' ? size : encryptedSize(size, SEGMENT_SIZE);
}
