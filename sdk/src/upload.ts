import { type HttpClient, sleep } from './client.ts';
import { createEncryptStream, HEADER_SIZE, TAG_SIZE } from './crypto/val1.ts';
import { ConflictError, ConnectionError, RateLimitError, ServerError, ValiseError } from './errors.ts';
import { chunksOf, countBytes, type FileSource, skipBytes } from './sources.ts';

// One file's upload: a streamed PUT to its upload URL, resumed after an
// interruption by asking the URL how many bytes it stored (`Upload-Offset`)
// and sending the rest with `Content-Range` (docs/transfers.md, "Resuming").

/** What an e2e upload needs to re-encrypt from a segment boundary identically. */
export type E2eMaterial = {
  key: Uint8Array<ArrayBuffer>;
  noncePrefix: Uint8Array<ArrayBuffer>;
  segmentSize: number;
};

export type UploadTarget = {
  url: string;
  /** Bytes the server stores: the plaintext in server mode, the VAL1 blob in e2e mode. */
  size: number;
  /** The upload URL's `part_size`, the file's own: chunks end on a multiple of it. */
  partSize: number;
  e2e: E2eMaterial | null;
};

export type UploadOptions = {
  signal?: AbortSignal | undefined;
  /** Called as bytes leave: `stored` is the server's offset when request number `request` started. */
  onBytes: (sentNow: number, stored: number, request: number) => void;
  /** Automatic resumes after a network failure or a 5xx; default 3. */
  maxResumes?: number | undefined;
  /** Ask the server for its offset before the first PUT (resuming an earlier session). */
  resume: boolean;
};

export async function uploadFile(http: HttpClient, target: UploadTarget, source: FileSource, options: UploadOptions) {
  const maxResumes = options.maxResumes ?? 3;
  let askOffset = options.resume;
  let resumes = 0;
  let busyWaits = 0;
  let slotWaits = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      const offset = askOffset ? await storedOffset(http, target.url, options.signal) : 0;
      if (offset === target.size && askOffset) {
        // Stored whole already, by a request whose answer did not come back as a success: the one
        // that finished it may not have told the transfer (Temporal unreachable: its 503). A PUT of
        // nothing does (the server tells again on any PUT of a finished upload); without it, the
        // transfer would wait for its upload deadline and then end as if the file never came.
        await putRange(http, target, new Uint8Array(0), offset, offset, options.signal);
        return;
      }
      await putFrom(http, target, source, offset, (sent) => options.onBytes(sent, offset, attempt), options.signal);
      return;
    } catch (error) {
      // The server receives only so many uploads at once (per address, per transfer, in all): a
      // refused PUT read none of the body, and is tried again when the server says, apart from the
      // resume budget.
      if (error instanceof RateLimitError && error.retryAfterSeconds !== undefined && slotWaits < SLOT_WAITS) {
        slotWaits++;
        await sleep(Math.min(MAX_SLOT_WAIT_MS, error.retryAfterSeconds * 1000), options.signal);
        continue;
      }
      if (!(error instanceof ValiseError) || !resumable(error)) throw error;
      askOffset = true;
      // The server still holds the lease of a request that broke off (a killed process, a cut
      // connection) until it notices, which takes longer on a busy server: wait for it, apart from
      // the resume budget.
      const busy = uploadInProgress(error) || (brokenOff(error) && (await leaseHeld(http, target.url, options.signal)));
      if (busy && busyWaits < BUSY_WAITS) {
        busyWaits++;
        await sleep(1000, options.signal);
        continue;
      }
      if (resumes >= maxResumes) throw error;
      await sleep(Math.min(8000, 250 * 2 ** resumes++), options.signal);
    }
  }
}

/** How many times an upload waits for a place among the uploads the server receives at once. */
const SLOT_WAITS = 60;
const MAX_SLOT_WAIT_MS = 30_000;

/** How many seconds an upload waits for the server to let go of an earlier request's lease. */
const BUSY_WAITS = 30;

/** 409 without an offset to resume from: another request (or a dead one) holds the upload. */
function uploadInProgress(error: ValiseError): boolean {
  return error instanceof ConflictError && error.body.upload_offset === undefined;
}

/**
 * A connection that failed without an answer. The server refuses a busy upload with a 409 before
 * it reads the body, and closes the connection: a client still sending (slower than the network
 * carries) writes into the closed connection before it reads the 409, and sees EPIPE or
 * ECONNRESET instead.
 */
function brokenOff(error: ValiseError): boolean {
  return error instanceof ConnectionError && error.code === 'connection_error';
}

/**
 * Whether another request holds the upload's lease now (`upload_in_progress` of `GET <url>`). False
 * when the server cannot say, so that a real failure still counts against the resume budget.
 */
async function leaseHeld(http: HttpClient, url: string, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    const status = await http.json<{ upload_in_progress?: unknown }>({
      method: 'GET',
      path: url,
      authenticate: false,
      signal,
      maxRetries: 0,
    });
    return status?.upload_in_progress === true;
  } catch (error) {
    if (error instanceof ValiseError && error.code === 'aborted') throw error;
    return false;
  }
}

function resumable(error: ValiseError): boolean {
  if (error.code === 'aborted') return false;
  return error instanceof ConnectionError || error instanceof ServerError || error instanceof ConflictError;
}

/** `Upload-Offset` of a HEAD on the upload URL: how many bytes are stored. */
export async function storedOffset(http: HttpClient, url: string, signal?: AbortSignal): Promise<number> {
  const response = await http.send({ method: 'HEAD', path: url, authenticate: false, signal });
  const offset = Number(response.headers.get('upload-offset'));
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new ValiseError({
      code: 'unexpected_response',
      status: response.status,
      message: `HEAD ${url} answered without a valid Upload-Offset`,
    });
  }
  return offset;
}

async function putFrom(
  http: HttpClient,
  target: UploadTarget,
  source: FileSource,
  offset: number,
  onBytes: (sent: number) => void,
  signal: AbortSignal | undefined,
): Promise<void> {
  const chunkBytes = http.uploadChunkBytes;
  if (chunkBytes === null) {
    const body = bodyFrom(target, source, offset).pipeThrough(countBytes(onBytes));
    return putRange(http, target, body, offset, target.size, signal);
  }
  // An empty file is one empty PUT.
  if (offset === target.size) return putRange(http, target, new Uint8Array(0), offset, offset, signal);
  // One part-aligned chunk at a time, each committed by the server: an interruption loses at most
  // the chunk in flight, and memory holds one chunk whatever the file's size.
  let start = offset;
  const body = bodyFrom(target, source, offset);
  for await (const chunk of chunksOf(body, Math.min(chunkLength(chunkBytes, target.partSize), target.size - offset))) {
    await putRange(http, target, chunk, start, start + chunk.length, signal);
    onBytes(chunk.length);
    start += chunk.length;
  }
}

/**
 * Bytes per chunk: as many whole parts of the file as `chunkBytes` holds, and at least one (a file
 * past 78 GiB has parts larger than 8 MiB, up to 525 MiB for 5 TiB).
 */
export function chunkLength(chunkBytes: number, partSize: number): number {
  return Math.max(1, Math.floor(chunkBytes / partSize)) * partSize;
}

/** One PUT of the stored bytes [start, end); Content-Range unless it is the whole file. */
async function putRange(
  http: HttpClient,
  target: UploadTarget,
  body: ReadableStream<Uint8Array> | Uint8Array,
  start: number,
  end: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'application/octet-stream' };
  if (start > 0 || end < target.size) headers['content-range'] = `bytes ${start}-${end - 1}/${target.size}`;
  const response = await http.send({
    method: 'PUT',
    path: target.url,
    authenticate: false,
    headers,
    body,
    signal,
    timeoutMs: http.transferTimeoutMs,
  });
  await response.body?.cancel(); // the answer (the file, uploaded) is not needed
}

/** The bytes of the stored object from `offset` on: the plaintext, or its VAL1 encryption. */
function bodyFrom(target: UploadTarget, source: FileSource, offset: number): ReadableStream<Uint8Array> {
  if (!target.e2e) return source.stream(offset);
  const { key, noncePrefix, segmentSize: S } = target.e2e;
  // Re-encrypt from the segment holding `offset` (same key, prefix and bytes), and drop what precedes it.
  const segment = offset < HEADER_SIZE ? 0 : Math.floor((offset - HEADER_SIZE) / (S + TAG_SIZE));
  const segmentStart = segment === 0 ? 0 : HEADER_SIZE + segment * (S + TAG_SIZE);
  return source
    .stream(segment * S)
    .pipeThrough(
      createEncryptStream({ key, noncePrefix, plaintextSize: source.size, segmentSize: S, firstSegment: segment }),
    )
    .pipeThrough(skipBytes(offset - segmentStart));
}
