import { createEncryptStream } from '/assets/sdk/crypto/val1.js';
import { chunksOf } from '/assets/sdk/sources.js';

// Uploads from the sender page, with progress (XMLHttpRequest: fetch reports
// none for uploads) and recovery: after a lost connection or a 5xx the page
// asks the upload URL what it stored (HEAD, Upload-Offset) and sends only the
// rest, up to RETRIES times (docs/transfers.md, "Resuming" and "Chunks"). When the server is
// receiving all the uploads it takes at once (429 with Retry-After, "Concurrent uploads"), the
// page waits what it says, up to SLOT_WAITS times, apart from the retries.

const RETRIES = 3;
const SLOT_WAITS = 60;
const MAX_SLOT_WAIT_MS = 30_000;

class UploadError extends Error {
  constructor(message, status, retryAfterSeconds) {
    super(message);
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** A lost connection, a 5xx or a busy lease (409) may pass; any other 4xx will not. */
  get retryable() {
    return this.status === 0 || this.status >= 500 || this.status === 409;
  }
}

function put(url, body, onProgress, contentRange) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('PUT', url);
    request.setRequestHeader('content-type', 'application/octet-stream');
    if (contentRange) request.setRequestHeader('content-range', contentRange);
    request.upload.addEventListener('progress', (event) => onProgress(event.loaded));
    request.addEventListener('load', () => {
      if (request.status >= 200 && request.status < 300) return resolve();
      let message = `The upload failed (${request.status}).`;
      try {
        message = JSON.parse(request.responseText).error.message;
      } catch {}
      const retryAfter = Number(request.getResponseHeader('retry-after'));
      reject(new UploadError(message, request.status, retryAfter > 0 ? retryAfter : undefined));
    });
    request.addEventListener('error', () => reject(new UploadError('The connection was lost during the upload.', 0)));
    request.send(body);
  });
}

async function storedOffset(url) {
  const response = await fetch(url, { method: 'HEAD', credentials: 'omit' });
  const offset = Number(response.headers.get('upload-offset'));
  if (!response.ok || !Number.isSafeInteger(offset)) {
    throw new UploadError(`The upload could not be checked (${response.status}).`, response.status);
  }
  return offset;
}

/** Runs `attempt(retry)` until it succeeds, a permanent error, or RETRIES retries (slot waits apart). */
async function withRetries(attempt) {
  let slotWaits = 0;
  for (let retry = 0; ; ) {
    try {
      return await attempt(retry);
    } catch (error) {
      // A refused upload stored nothing: the same attempt is made again once the server has room.
      if (error instanceof UploadError && error.status === 429 && error.retryAfterSeconds && slotWaits < SLOT_WAITS) {
        slotWaits++;
        await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_SLOT_WAIT_MS, error.retryAfterSeconds * 1000)));
        continue;
      }
      if (!(error instanceof UploadError) || !error.retryable || retry >= RETRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** retry));
      retry++;
    }
  }
}

/**
 * A server-mode file: one PUT of the File, which the browser reads from disk as it sends. With
 * `resume` (a page reloaded mid-upload) it first asks what the upload URL already holds.
 */
export function sendFile(file, entry, onProgress, { resume = false } = {}) {
  return withRetries(async (retry) => {
    const offset = retry > 0 || resume ? await storedOffset(entry.url) : 0;
    if (offset > 0 && offset === entry.size) return onProgress(entry.size);
    const range = offset > 0 ? `bytes ${offset}-${entry.size - 1}/${entry.size}` : undefined;
    await put(entry.url, offset > 0 ? file.slice(offset) : file, (loaded) => onProgress(offset + loaded), range);
  });
}

/**
 * An e2e file: encrypted here into its VAL1 blob and sent in chunks of the entry's part_size, each
 * a PUT with Content-Range that the server commits on arrival. Streaming request bodies need HTTP/2
 * in Chromium and exist in no other browser, and a chunk at a time keeps one part in memory
 * (8 MiB), whatever the file's size.
 */
export async function sendEncrypted(file, key, entry, onProgress, options = {}) {
  // An intake declares each file's nonce prefix before the upload; a transfer's is made here.
  const noncePrefix = options.noncePrefix ?? crypto.getRandomValues(new Uint8Array(7));
  const blob = file.stream().pipeThrough(createEncryptStream({ key, noncePrefix, plaintextSize: file.size }));
  // Resuming (a page reloaded mid-upload): the same key and prefix give the same blob, so the
  // chunks the upload URL already holds are encrypted again only to be skipped.
  const stored = options.resume ? await withRetries(() => storedOffset(entry.url)) : 0;
  let start = 0;
  for await (const chunk of chunksOf(blob, Math.min(entry.part_size, entry.size))) {
    const end = start + chunk.length;
    if (end <= stored) {
      onProgress(end);
      start = end;
      continue;
    }
    await withRetries(async (retry) => {
      // A chunk whose answer was lost may have been committed all the same.
      if (retry > 0 && (await storedOffset(entry.url)) >= end) return;
      // The browser copies the bytes when the request starts; the buffer is refilled only after.
      await put(entry.url, chunk, (loaded) => onProgress(start + loaded), `bytes ${start}-${end - 1}/${entry.size}`);
    });
    start = end;
  }
  if (start !== entry.size) throw new Error(`${file.name} changed while it was being sent.`);
}
