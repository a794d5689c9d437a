import { createHash } from 'node:crypto';
import { PassThrough, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { IntegrityError } from '../crypto/segmented-aead.ts';
import type { StoredFile } from '../db/queries/stored-files.ts';
import { scanDuration, scans } from '../observability/metrics.ts';
import { type ContentDeps, openContent } from '../uploads/content.ts';
import type { ScanStatus } from '../vocabulary.ts';
import type { Scanner } from './clamd.ts';

export type FileScan = {
  /** SHA-256 of the plaintext, computed on the way to clamd. */
  sha256: string;
  scanStatus: Extract<ScanStatus, 'clean' | 'infected' | 'not_scanned_too_large'>;
  signature: string | null;
};

/** A server-mode file that does not match what its upload recorded: scanning it again will not help. */
export class ChecksumMismatchError extends Error {}

/** A server-mode file whose stored ciphertext fails authentication: its bytes changed after upload. */
export class CorruptContentError extends Error {}

/**
 * Streams one server-mode file through decryption and SHA-256 into clamd. `progress` is called with
 * the bytes read so far, as they flow and every 5 s while clamd thinks after the last byte (20 s for
 * 1 GiB), so an activity can heartbeat. A transient fault (clamd, storage) throws a plain Error.
 */
export async function scanStoredFile(
  deps: ContentDeps & { scanner: Scanner },
  file: StoredFile,
  progress: (bytes: number) => void,
): Promise<FileScan> {
  const started = performance.now();
  try {
    const scan = await scanAndHash(deps, file, progress);
    scans.inc({ result: scan.scanStatus });
    return scan;
  } catch (error) {
    scans.inc({ result: 'error' });
    throw error;
  } finally {
    scanDuration.observe((performance.now() - started) / 1000);
  }
}

async function scanAndHash(
  deps: ContentDeps & { scanner: Scanner },
  file: StoredFile,
  progress: (bytes: number) => void,
): Promise<FileScan> {
  const hash = createHash('sha256');
  let seen = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      seen += chunk.length;
      progress(seen);
      callback(null, chunk);
    },
  });
  const toScanner = new PassThrough();
  // A blob whose first segment (or header) fails is refused before any byte is read out.
  const content = await openContent(deps, file, 'server').catch((error: unknown) => {
    if (error instanceof IntegrityError) {
      throw new CorruptContentError(`file ${file.id} fails authentication: ${error.message}`);
    }
    throw error;
  });
  // The decryption's own error, seen before the streams after it are cut (and the scanner, whose
  // own error may then come first): altered bytes are final, a failed read is not.
  let decryptError: unknown = content.errored ?? null;
  content.once('error', (error) => {
    decryptError = error;
  });
  const beating = setInterval(() => progress(seen), 5_000);
  const [result] = await Promise.all([deps.scanner.scan(toScanner), pipeline(content, tap, toScanner)])
    .catch((error: unknown) => {
      if (decryptError instanceof IntegrityError) {
        throw new CorruptContentError(`file ${file.id} fails authentication: ${decryptError.message}`);
      }
      throw error;
    })
    .finally(() => clearInterval(beating));
  const sha256 = hash.digest('hex');
  if (seen !== file.size) throw new Error(`decrypted ${seen} bytes of ${file.size} for file ${file.id}`);
  if (file.sha256 && file.sha256 !== sha256) {
    throw new ChecksumMismatchError(`file ${file.id} does not match its upload checksum`);
  }
  if (result.status === 'error') throw new Error(`clamd: ${result.message}`);
  // Past clamd's limits nothing is known of the content: say it was not scanned, never that it is clean.
  const scanStatus = result.status === 'too_large' ? 'not_scanned_too_large' : result.status;
  return { sha256, scanStatus, signature: result.status === 'infected' ? result.signature : null };
}
