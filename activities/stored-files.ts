import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import type { StoredFile } from '../lib/db/queries/stored-files.ts';
import type { Semaphore } from '../lib/in-parallel.ts';
import type { Scanner } from '../lib/scan/clamd.ts';
import { ChecksumMismatchError, CorruptContentError, type FileScan, scanStoredFile } from '../lib/scan/scan-file.ts';
import type { ContentDeps } from '../lib/uploads/content.ts';
import type { ScanFailure } from '../lib/vocabulary.ts';

// What the activities of every file owner (transfers, intake documents, vault
// items) do to a stored file the same way: scan it, and remove its blob.

/**
 * The ApplicationFailure types of a file that cannot be verified, ever: retrying cannot help, so
 * the owner's workflow ends the resource (`failureOf` names them for its event).
 */
export const SCAN_FAILURE_TYPES = {
  ChecksumMismatch: 'checksum_mismatch',
  ContentCorrupt: 'content_corrupt',
  SizeMismatch: 'size_mismatch',
} as const satisfies Record<string, ScanFailure>;

/** The vocabulary's word for a permanent scan failure, from its ApplicationFailure type. */
export function failureOf(type: string | null): ScanFailure {
  return (type && SCAN_FAILURE_TYPES[type as keyof typeof SCAN_FAILURE_TYPES]) || 'other';
}

/** How often a scan waiting for its turn at clamd heartbeats. */
const SCAN_WAIT_BEAT_MS = 5_000;

/**
 * Streams one server-mode file into clamd, heartbeating, and stores the verdict with `record`. A
 * file that no longer matches its upload (checksum, or ciphertext that fails authentication) is
 * final; other faults are transient and Temporal retries them.
 */
export async function scanAndRecord(
  deps: ContentDeps & { scanner: Scanner; scanSlots?: Semaphore | undefined },
  file: StoredFile,
  record: (scan: FileScan) => Promise<void>,
): Promise<FileScan['scanStatus']> {
  try {
    // Its turn at clamd first, before the file is opened: a waiting scan holds no storage stream.
    // The place is freed as soon as clamd has answered, not after the verdict is recorded.
    const scanning = () => scanStoredFile(deps, file, heartbeat);
    const scan = deps.scanSlots
      ? await deps.scanSlots.run(scanning, { beat: () => heartbeat(), everyMs: SCAN_WAIT_BEAT_MS })
      : await scanning();
    await record(scan);
    return scan.scanStatus;
  } catch (error) {
    if (error instanceof ChecksumMismatchError)
      throw ApplicationFailure.nonRetryable(error.message, 'ChecksumMismatch');
    if (error instanceof CorruptContentError) throw ApplicationFailure.nonRetryable(error.message, 'ContentCorrupt');
    throw error;
  }
}

// The workflows and the sweeper (lib/storage/sweeper.ts) remove blobs the same way.
export { removeBlob, removeBlobs } from '../lib/storage/remove-blob.ts';
