import { type Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DomainError } from '../../../lib/errors.ts';
import { type Chunk, type ReceiveOptions, receiveUpload } from '../../../lib/uploads/receive.ts';
import type { ResolvedUpload } from '../../../lib/uploads/resolve.ts';
import { StallGuard } from '../../../lib/uploads/stall-guard.ts';
import type { UploadRefusal } from '../../../lib/uploads/upload-gate.ts';
import { clientIp } from '../../client-ip.ts';
import { type AnyRequest, headerOf } from '../../types.ts';

// What every route that takes a file's bytes does around lib/uploads/receive.ts (PUT, and tus's
// PATCH and POST with creation-with-upload): one upload slot held while the body is read, and a
// body given up on closes its connection.

/**
 * A body up to this size is read (and dropped) before a refusal of its request is answered: its
 * client, still sending, then reads the answer instead of a connection closed under it. A larger
 * one is not worth reading to say no; its client sees the connection close and asks HEAD.
 */
const READ_BEFORE_REFUSING = 16 * 1024 * 1024;

/** A refused upload is worth retrying soon: slots free up as other uploads end. */
const RETRY_AFTER_SECONDS = 5;

const REFUSALS: Record<UploadRefusal, string> = {
  uploads_per_ip: 'Too many uploads from your address at once. Retry when one has finished.',
  uploads_per_key: 'Too many uploads for this transfer, vault or publishable key at once. Retry when one has finished.',
  uploads_busy: 'Too many uploads in progress. Retry in a moment.',
};

/**
 * Takes one of the upload slots (per address, per holder of upload URLs, in all) for this request;
 * past a bound, 429 with `Retry-After`, before a byte of the body is read. Answers the release.
 */
function takeUploadSlot(request: AnyRequest, holder: string): () => void {
  const { services } = request.server.app;
  const slot = services.uploads.enter(clientIp(request, services.config), holder);
  if (!slot.ok) {
    throw new DomainError('rate_limited', REFUSALS[slot.reason], {
      retryAfterSeconds: RETRY_AFTER_SECONDS,
      details: { reason: slot.reason },
    });
  }
  return slot.release;
}

/** Receives the request's body as `chunk` of the file, holding an upload slot while it is read. */
export async function receiveBody(
  request: AnyRequest,
  target: ResolvedUpload,
  body: Readable,
  chunk: Chunk,
  options: ReceiveOptions = {},
) {
  const { services } = request.server.app;
  const socket = request.raw.req.socket;
  // The slot is held while the body is read into part buffers, and given back once they are let go.
  const slot = takeUploadSlot(request, target.holder);
  return receiveUpload(services, target, body, chunk, request.info.received, options)
    .then((result) => {
      // Answered before its body was all read (a file already uploaded takes nothing and says so
      // at once): what is still coming is dropped, within the same timeouts.
      if (!request.raw.req.complete) void dropBody(request, body);
      return result;
    })
    .catch((error: unknown) => {
      // A body given up before it was all received (a stalled or trickling client) leaves the
      // connection unusable; hapi takes it for the client's abort, answers nothing and would
      // keep the connection open.
      if (request.raw.req.destroyed && !request.raw.req.complete) socket.destroy();
      throw error;
    })
    .finally(slot);
}

/**
 * Runs what checks a tus request before its body is read (headers, the URL, the offset): a refusal
 * reads a small body first (READ_BEFORE_REFUSING), so that a tus client sees the 4xx and its
 * envelope rather than a reset connection it would retry.
 */
export async function checkedBeforeTheBody<T>(
  request: AnyRequest,
  body: Readable,
  check: () => Promise<T>,
): Promise<T> {
  try {
    return await check();
  } catch (error) {
    const length = Number(headerOf(request, 'content-length') ?? Number.NaN);
    if (length > 0 && length <= READ_BEFORE_REFUSING) await dropBody(request, body);
    throw error;
  }
}

/**
 * Reads a body only to drop it, held to the upload timeouts as a stored body is: a client that
 * trickles it, or stops sending, has its connection closed after UPLOAD_IDLE_TIMEOUT (or
 * UPLOAD_REQUEST_TIMEOUT) instead of keeping it, unanswered, for as long as it likes.
 */
async function dropBody(request: AnyRequest, body: Readable): Promise<void> {
  const { idleMs, requestMs } = request.server.app.services.config.transfers.uploads;
  const guard = new StallGuard({ idleMs, requestMs, deadline: request.info.received + requestMs });
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  // Taken now: a request destroyed by the pipeline may no longer hold it.
  const { socket } = request.raw.req;
  await pipeline(body, guard, sink).catch(() => {
    if (!request.raw.req.complete) socket.destroy();
  });
}
