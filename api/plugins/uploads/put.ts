import type { Readable } from 'node:stream';
import Joi from 'joi';
import { DomainError } from '../../../lib/errors.ts';
import { receiveUpload } from '../../../lib/uploads/receive.ts';
import { resolveUpload } from '../../../lib/uploads/resolve.ts';
import type { UploadRefusal } from '../../../lib/uploads/upload-gate.ts';
import { clientIp } from '../../client-ip.ts';
import { parseContentRange } from '../../http/ranges.ts';
import { defineRoute, type NoInput } from '../../route.ts';
import { type AnyRequest, headerOf } from '../../types.ts';
import { uploadToken } from './schemas.ts';

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

export const putRoute = defineRoute<{ token: string }, NoInput, Readable>({
  method: 'PUT',
  path: '/v1/uploads/{token}',
  options: {
    id: 'uploads.put',
    plugins: { valise: { openapi: { errors: [408, 409, 410] } } },
    auth: false,
    description: 'Upload one file',
    notes:
      'The body is the file, streamed. To resume, send `Content-Range: bytes <offset>-<size-1>/<size>` with the rest, where offset is the `Upload-Offset` a HEAD returns. A client that cannot stream may send chunks that end at a multiple of `part_size`; each is committed. A client that sends nothing for `UPLOAD_IDLE_TIMEOUT` (60 s), or is still sending after `UPLOAD_REQUEST_TIMEOUT` (6 h), is disconnected; its committed parts stay, so it resumes. Past `UPLOADS_PER_IP` uploads at once from one address, `UPLOADS_PER_KEY` for one transfer, vault or publishable key, or `UPLOADS_MAX` in all: 429 `rate_limited` with `Retry-After` and `reason`.',
    tags: ['api', 'uploads'],
    payload: {
      output: 'stream',
      parse: false,
      maxBytes: Number.MAX_SAFE_INTEGER,
      // Not hapi's timeouts: receiveUpload ends a body that stalls (UPLOAD_IDLE_TIMEOUT, not
      // counting the time spent storing parts) or runs too long (UPLOAD_REQUEST_TIMEOUT).
      timeout: false,
      allow: ['application/octet-stream', 'binary/octet-stream', 'application/json'],
    },
    timeout: { socket: false },
    validate: { params: Joi.object<{ token: string }>({ token: uploadToken.required() }) },
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const target = await resolveUpload(services, request.params.token);
    const socket = request.raw.req.socket;
    const contentRange = headerOf(request, 'content-range');
    const contentLength = headerOf(request, 'content-length');
    const chunk = {
      range: contentRange === undefined ? undefined : parseContentRange(contentRange),
      length: contentLength === undefined ? undefined : Number(contentLength),
    };
    // The slot is held while the body is read into part buffers, and given back once they are let go.
    const slot = takeUploadSlot(request, target.holder);
    const result = await receiveUpload(services, target, request.payload, chunk, request.info.received)
      .catch((error: unknown) => {
        // A body given up before it was all received (a stalled or trickling client) leaves the
        // connection unusable; hapi takes it for the client's abort, answers nothing and would
        // keep the connection open.
        if (request.raw.req.destroyed && !request.raw.req.complete) socket.destroy();
        throw error;
      })
      .finally(slot);
    return h.response(result).header('Upload-Offset', String(result.upload_offset));
  },
});
