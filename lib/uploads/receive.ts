import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { generateDataKey, unwrapDataKey, wrapDataKey } from '../crypto/key-wrap.ts';
import { createEncryptStream, NONCE_PREFIX_SIZE, SizeMismatchError } from '../crypto/segmented-aead.ts';
import { type FileTable, type StoredFile, storedFileKeyAad } from '../db/queries/stored-files.ts';
import { createUploadQueries } from '../db/queries/uploads.ts';
import { DomainError } from '../errors.ts';
import { countUpload } from '../observability/metrics.ts';
import type { Services } from '../services.ts';
import type { EncryptionMode } from '../vocabulary.ts';
import { PartWriter, UploadSizeError } from './part-writer.ts';
import { partPlan, partSize, SEGMENT_SIZE } from './parts.ts';
import { StallGuard, UploadTimeoutError } from './stall-guard.ts';
import { type BodyChecksum, ChecksumStage, KeepFirst } from './tus.ts';
import { type HeldLease, type UploadSession, UploadSessionBroken } from './upload-sessions.ts';

// PUT /v1/uploads/{token}: one file, streamed straight through encryption
// into S3 multipart parts, for any owner of stored files (a transfer, an
// intake document, a vault). Resumable: committed parts survive an
// interrupted request, HEAD reports how far the file got, and a request that
// carries the rest (api/plugins/uploads/put.ts reads its Content-Range)
// continues from there. A client that falls silent (UPLOAD_IDLE_TIMEOUT) or
// trickles past UPLOAD_REQUEST_TIMEOUT is disconnected: its part buffer goes,
// its committed parts stay, and it resumes like any interrupted upload.
// tus's PATCH (and POST with creation-with-upload) comes in here too, as a chunk
// of the file (lib/uploads/tus-chunk.ts): one way of storing, whatever the way in.

/** The `object` of a file as the upload routes answer it, by its owner. */
export const UPLOADED_FILE_OBJECTS = ['transfer_file', 'intake_file', 'coffre_item'] as const;

/**
 * A file as the upload routes answer it: the same members whoever owns it (`TransferFile` in the
 * OpenAPI document), `object` naming the owner's kind of file.
 */
export type UploadedFileView = {
  id: string;
  object: (typeof UPLOADED_FILE_OBJECTS)[number];
  name: string;
  size: number;
  mime_type: string;
  upload_state: StoredFile['upload_state'];
  bytes_received: number;
  sha256: string | null;
  scan_status: StoredFile['scan_status'];
};

/** A stored file as the upload routes answer it, for owners whose files have no view of their own. */
export function uploadedFileView(stored: StoredFile, id: string, object: UploadedFileView['object']): UploadedFileView {
  const { name, size, mime_type, upload_state, bytes_received, sha256, scan_status } = stored;
  return { id, object, name, size, mime_type, upload_state, bytes_received, sha256, scan_status };
}

/** One file to receive, and what its owner says about it. */
export type UploadTarget = {
  table: FileTable;
  file: StoredFile;
  /** `server`: we seal the bytes as they come; `e2e`: they arrive sealed by the client. */
  mode: EncryptionMode;
  /**
   * Whose upload URLs these are, for the per-key bound of the upload slots (lib/uploads/upload-gate.ts):
   * `transfer:<id>`, `coffre:<id>`, or for an intake submission the publishable key that started it.
   */
  holder: string;
  /** Why the owner takes no more bytes now (ended, past its deadline…), or null while it does. */
  refusal: DomainError | null;
  /** Told when the file's last byte is stored, and again when a finished upload is repeated. */
  uploaded(fileId: string): Promise<void>;
  /** The file as the upload routes answer it. */
  present(file: StoredFile): UploadedFileView;
};

export function uploadOffset(file: StoredFile): number {
  return file.upload_state === 'uploaded' ? file.size : file.bytes_received;
}

/**
 * The file as stored now, and whether a request is sending it (it holds the lease), so that a PUT
 * is refused with 409. A client that was refused may not have seen the 409: the server answers it
 * before reading the body and closes the connection, which a client still sending sees as a broken
 * pipe. This tells it to wait for the lease rather than count a failed attempt. Both come from one
 * read: the offset answered is the one the lease state goes with.
 */
export async function uploadStateNow(
  services: Services,
  target: UploadTarget,
): Promise<{ file: StoredFile; inProgress: boolean }> {
  const { leaseMs } = services.config.transfers.uploads;
  const now = await createUploadQueries(services.db, target.table, leaseMs).fileAndLease(target.file.id);
  const file = now?.file ?? target.file;
  return { file, inProgress: file.upload_state !== 'uploaded' && now?.leaseHeld === true };
}

/**
 * What a request says it carries: `range`, bytes `start` to `end` (exclusive) of a file of `total`
 * bytes, absent for the whole file, or `unreadable` when it said so in a way we cannot read; and
 * `length`, how many bytes its body holds, when it says.
 */
export type Chunk = {
  range?: ChunkRange | 'unreadable' | undefined;
  length?: number | undefined;
  /**
   * Bytes the body carries past `range` that are read and dropped (a tus PATCH that ends off a part
   * boundary: the offset answered tells its client where to go on).
   */
  extra?: number | undefined;
  /** What the whole body hashes to (tus `Upload-Checksum`): none of its parts is committed unless it does. */
  checksum?: BodyChecksum | undefined;
};
export type ChunkRange = { start: number; end: number; total: number };

/** How a route takes a body: tus's PATCH answers a chunk once received (lib/uploads/upload-sessions.ts). */
export type ReceiveOptions = { answerOnReceipt?: boolean };

export async function receiveUpload(
  services: Services,
  target: UploadTarget,
  body: Readable,
  chunk: Chunk,
  /** When the request arrived (epoch ms): UPLOAD_REQUEST_TIMEOUT counts from there. */
  receivedAt = Date.now(),
  options: ReceiveOptions = {},
) {
  let { file } = target;
  if (file.upload_state === 'uploaded') {
    body.resume();
    // Repeating a finished upload is harmless and re-tells the owner, in case that failed the first time.
    await target.uploaded(file.id);
    return { ...target.present(file), upload_offset: file.size };
  }
  if (target.refusal) throw target.refusal;
  const { maxParts, leaseMs } = services.config.transfers.uploads;
  const uploads = createUploadQueries(services.db, target.table, leaseMs);
  const sessions = services.uploadSessions;
  const wanted = typeof chunk.range === 'object' ? chunk.range.start : 0;
  let session = options.answerOnReceipt ? sessions.join(file.id, wanted) : undefined;
  if (!session && sessions.receiving(file.id)) throw uploadInProgressError();
  // Otherwise this process may still be storing the file's earlier chunks: the offset to start at
  // is known once they are committed (or failed). A tus chunk reads it again in any case: a session
  // it was checked against may have ended since.
  if (!session && ((await sessions.settled(file.id)) || options.answerOnReceipt)) {
    file = (await uploads.file(file.id)) ?? file;
  }
  let range: Span;
  try {
    range = acceptedRange(chunk.range, file, partSize(file.size, maxParts), session?.offset);
    const carried = range.end - range.start + (chunk.extra ?? 0);
    if (chunk.length !== undefined && chunk.length !== carried) {
      throw new DomainError('validation_error', `Content-Length must be ${carried} for this request.`, {
        param: 'Content-Length',
      });
    }
  } catch (error) {
    session?.left();
    throw error;
  }

  let lease: HeldLease;
  if (session) lease = session.lease;
  else {
    const leaseId = randomUUID();
    const leased = await uploads.acquireLease(file.id, leaseId);
    if (!leased) throw uploadInProgressError();
    // The offset was read before the lease was taken: another request may have moved it since.
    if (range.start !== 0 && range.start !== uploadOffset(leased)) {
      await uploads.releaseLease(file.id, leaseId);
      throw resumeFromError(uploadOffset(leased));
    }
    file = leased;
    lease = holdLease(uploads, file.id, leaseId, leaseMs, () => body.destroy(new UploadLeaseLostError()));
    // The first chunk of a tus upload that goes on after it opens the session the next ones join.
    if (options.answerOnReceipt && range.end < file.size) session = sessions.open(file.id, range.start, lease);
  }
  const turn = { answered: false };
  try {
    if (session) await session.room(services.config.transfers.uploads.partsStoring);
    const stored = await streamParts(services, target, file, range, body, receivedAt, lease, chunk, session, turn);
    // What this request stored: a tus chunk's bytes past its last whole part are dropped.
    if (!turn.answered) countUpload(target.table, 'stored', stored.upload_offset - range.start);
    return stored;
  } catch (error) {
    // The client's doing (a wrong size, a stall, a twin request) or ours.
    const theirs =
      error instanceof UploadSizeError ||
      error instanceof SizeMismatchError ||
      error instanceof UploadTimeoutError ||
      error instanceof UploadLeaseLostError;
    countUpload(target.table, theirs ? 'rejected' : 'failed');
    if (error instanceof UploadSizeError || error instanceof SizeMismatchError) {
      throw new DomainError('validation_error', error.message, { param: 'body' });
    }
    // The connection is gone with the body (the pipeline destroyed it); this is for the logs.
    if (error instanceof UploadTimeoutError) {
      throw new DomainError('validation_error', error.message, { param: 'body', kind: 'timed_out' });
    }
    if (error instanceof UploadLeaseLostError) throw uploadInProgressError();
    // An earlier chunk answered in this session could not be stored: so neither can this one.
    if (error instanceof UploadSessionBroken) {
      const stored = await uploads.file(file.id);
      throw resumeFromError(stored ? uploadOffset(stored) : 0);
    }
    throw error;
  } finally {
    if (!session) await lease.end();
    else if (!turn.answered) session.left();
  }
}

/**
 * Takes over a lease just acquired: renewed while it is held, not only when a part is stored (a slow
 * line may take longer than the lease to send one part). A renewal that fails on our side is tried
 * again at the next tick; one that finds the lease gone calls `lost`.
 */
function holdLease(
  uploads: ReturnType<typeof createUploadQueries>,
  fileId: string,
  id: string,
  leaseMs: number,
  lost: () => void,
): HeldLease {
  const renewal = setInterval(() => {
    uploads.renewLease(fileId, id).then(
      (held) => held || lease.released || lost(),
      () => undefined,
    );
  }, leaseMs / 3);
  const lease: HeldLease = {
    id,
    // Freed by the last write when it can be (a releasing commit, the completion): one round trip fewer.
    released: false,
    async end() {
      clearInterval(renewal);
      if (lease.released) return;
      lease.released = true;
      await uploads.releaseLease(fileId, id);
    },
  };
  return lease;
}

/** The client is not where the file is: 409 with the offset to resume from (tus clients then ask HEAD). */
function resumeFromError(offset: number) {
  return new DomainError('validation_error', `This file has ${offset} bytes stored: resume from byte ${offset}.`, {
    param: 'Content-Range',
    kind: 'conflict',
    details: { upload_offset: offset },
  });
}

/** This request no longer holds the file's lease: another request writes the file now. */
class UploadLeaseLostError extends Error {
  constructor() {
    super('the upload lease was lost');
  }
}

export function uploadInProgressError() {
  return new DomainError('validation_error', 'Another upload of this file is in progress.', { kind: 'conflict' });
}

async function streamParts(
  services: Services,
  target: UploadTarget,
  file: StoredFile,
  range: Span,
  body: Readable,
  receivedAt: number,
  lease: HeldLease,
  chunk: Pick<Chunk, 'extra' | 'checksum'>,
  /** The tus session the request is in: it commits after the chunks answered before it. */
  session: UploadSession | undefined,
  /** Set once the request is answered with its parts still being stored (the session commits them). */
  turn: { answered: boolean },
) {
  const { start, end } = range;
  const leaseId = lease.id;
  const uploads = createUploadQueries(services.db, target.table, services.config.transfers.uploads.leaseMs);
  const holding = (still: boolean) => {
    if (!still) throw new UploadLeaseLostError();
  };
  /** The file as the last write left it (its answer), which also says the lease was still ours. */
  let latest: StoredFile | null = null;
  const recorded = (row: StoredFile | null, released: boolean) => {
    if (!row) throw new UploadLeaseLostError();
    latest = row;
    if (released) lease.released = true;
  };
  // The request's last commit frees the lease when the file goes on in a later request; the last
  // part of the file keeps it until the multipart upload is completed, and a session until it ends.
  const releasing = (plainEnd: number) => !session && plainEnd === end && end < file.size;
  const objects = services.objects;
  const { mode } = target;
  const limits = services.config.transfers.uploads;
  const plan = partPlan(file.size, mode, limits.maxParts);
  const firstPart = plan.findIndex((p) => p.plainStart === start);
  const lastPart = plan.findIndex((p) => p.plainEnd === end);
  if (firstPart === -1 || lastPart < firstPart) throw new Error(`no parts span ${start}-${end}`);

  let uploadId = file.multipart_upload_id;
  let parts = file.parts;
  let { data_key_wrapped: wrappedKey, nonce_prefix: noncePrefix } = file;
  if (start === 0) {
    if (uploadId) await objects.abortMultipart(file.object_key, uploadId);
    uploadId = await objects.startMultipart(file.object_key);
    if (mode === 'server') {
      wrappedKey = wrapDataKey(services.keyring, generateDataKey(), storedFileKeyAad(file.id));
      noncePrefix = randomBytes(NONCE_PREFIX_SIZE);
    }
    holding(
      await uploads.begin(
        file.id,
        leaseId,
        uploadId,
        wrappedKey && noncePrefix ? { dataKeyWrapped: wrappedKey, noncePrefix } : null,
      ),
    );
    parts = [];
  }
  const multipartId = uploadId;
  if (!multipartId) throw new Error('resuming an upload that has no multipart upload');

  // The hash is of the plaintext, so it can only be computed when this request carries all of it;
  // otherwise the worker's scan records it.
  const hash = start === 0 && end === file.size ? createHash('sha256') : null;
  const stages: Array<NodeJS.ReadWriteStream> = [];
  // The client's checksum is of its whole body, dropped bytes included.
  const checksum = chunk.checksum ? new ChecksumStage(chunk.checksum) : null;
  if (checksum) stages.push(checksum);
  if (chunk.extra) stages.push(new KeepFirst(end - start));
  if (hash) stages.push(hashing(hash));
  if (mode === 'server') {
    if (!wrappedKey || !noncePrefix) throw new Error(`file ${file.id} has no key material`);
    stages.push(
      createEncryptStream({
        key: unwrapDataKey(services.keyring, wrappedKey, storedFileKeyAad(file.id)),
        plaintextSize: file.size,
        segmentSize: SEGMENT_SIZE,
        noncePrefix,
        firstSegment: start / SEGMENT_SIZE,
        end,
      }),
    );
  }
  const unverified: Array<{ stored: StoredFile['parts'][number]; plainEnd: number }> = [];
  const guard = new StallGuard({ ...limits, deadline: receivedAt + limits.requestMs });
  const writer = new PartWriter(
    plan.slice(firstPart, lastPart + 1),
    {
      store: (part, bytes) => {
        const store = () => objects.uploadPart(file.object_key, multipartId, part.number, bytes, part.blobBytes);
        // Storing a buffered part is the server's time, not the client's silence; a streamed one
        // goes at the client's pace (the writer reports its waits for the object store).
        return Buffer.isBuffer(bytes) ? guard.whileBusy(store) : store();
      },
      // In part order: the recorded offset is always where the stored bytes end. A checksummed body
      // commits its parts only once it is verified whole; until then they are stored, not recorded,
      // and a later upload of the same part numbers replaces them.
      commit: async (part, etag) => {
        const stored = { partNumber: part.number, etag };
        parts = [...parts, stored];
        if (checksum) unverified.push({ stored, plainEnd: part.plainEnd });
        else {
          const release = releasing(part.plainEnd);
          recorded(await uploads.commitPart(file.id, leaseId, stored, part.plainEnd, release), release);
        }
      },
    },
    {
      storing: limits.partsStoring,
      // A chunk of one part (a tus PATCH, a PUT with Content-Range) has no next part to read while
      // its part is stored, and answers only once it is: its part streams into the object store as
      // it arrives, so the client's bytes and the store's writes overlap instead of taking turns.
      bufferedPartMax: firstPart === lastPart && !(start === 0 && end === file.size) ? 0 : limits.partBufferMax,
      waiting: (work) => guard.whileBusy(work),
      // After the chunks the session answered before this one: parts are recorded in file order.
      after: session?.committed,
    },
  );
  const piped = pipeline(body, guard, ...stages, writer);
  const commitVerified = async () => {
    for (const { stored, plainEnd } of unverified) {
      const release = releasing(plainEnd);
      recorded(await uploads.commitPart(file.id, leaseId, stored, plainEnd, release), release);
    }
  };
  try {
    // A session's chunk that does not end the file is answered once its bytes are all received
    // (and its checksum verified): its parts are stored and committed behind the answer.
    const early = session !== undefined && end < file.size;
    const settled = await Promise.race([
      piped.then(() => 'stored' as const),
      ...(early ? [writer.received.then(() => 'received' as const)] : []),
    ]);
    if (settled === 'received' && session) {
      try {
        checksum?.verify();
      } catch (error) {
        writer.destroy(error as Error);
        await piped.catch(() => undefined);
        throw error;
      }
      turn.answered = true;
      session.answered(
        end,
        piped.then(commitVerified).then(() => countUpload(target.table, 'stored', end - start)),
      );
      return { ...target.present(file), upload_offset: end };
    }
  } catch (error) {
    // A cut connection may leave parts being stored: they are recorded (under this request's
    // lease, released only after this) before the error is answered, so a resume keeps them.
    await writer.settled();
    throw error;
  }
  if (checksum) {
    checksum.verify();
    await commitVerified();
  }
  // A chunk that ends before the file does leaves its parts committed and the file waiting for the next.
  if (end === file.size) {
    // Every part of the file, this request's and those of the chunks before it (a session's
    // included, committed before this request's last commit).
    const recordedParts: StoredFile['parts'] = (latest as StoredFile | null)?.parts ?? parts;
    await objects.completeMultipart(file.object_key, multipartId, recordedParts);
    recorded(await uploads.complete(file.id, leaseId, hash ? hash.digest('hex') : null), true);
    await target.uploaded(file.id);
  }
  const stored = latest ?? (await uploads.file(file.id));
  if (!stored) throw new Error(`file ${file.id} vanished`);
  return { ...target.present(stored), upload_offset: end };
}

function hashing(hash: ReturnType<typeof createHash>): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
  });
}

/** This request's bytes of the file, `end` exclusive. */
type Span = { start: number; end: number };

/**
 * Without a range the request carries the whole file. With one, it starts at the stored offset
 * (or 0, to start again) and ends at the file's end or at a part boundary: a client that cannot
 * stream a request body sends the file in chunks of `part_size`, each one committed.
 */
function acceptedRange(
  range: Chunk['range'],
  file: StoredFile,
  partBytes: number,
  /** Where the file's tus session expects its next chunk, ahead of what is committed yet. */
  sessionOffset?: number,
): Span {
  if (range === undefined) return { start: 0, end: file.size };
  const offset = sessionOffset ?? uploadOffset(file);
  const { start, end, total }: Partial<ChunkRange> = range === 'unreadable' ? {} : range;
  const endsWell = end === file.size || (end !== undefined && end < file.size && end % partBytes === 0);
  if (start === undefined || end === undefined || total !== file.size || start >= end || !endsWell) {
    throw new DomainError(
      'validation_error',
      `Content-Range must be "bytes ${offset}-${file.size - 1}/${file.size}", or end just before a multiple of part_size (${partBytes}).`,
      { param: 'Content-Range' },
    );
  }
  if (start !== offset && start !== 0) throw resumeFromError(offset);
  return { start, end };
}
