import type { Readable } from 'node:stream';
import type { ResponseToolkit } from '@hapi/hapi';
import Joi from 'joi';
import { IntegrityError } from '../../../lib/crypto/segmented-aead.ts';
import { verifyToken } from '../../../lib/crypto/signed-token.ts';
import { DomainError } from '../../../lib/errors.ts';
import { countDelivery } from '../../../lib/recipients/deliveries.ts';
import type { DownloadRefusal } from '../../../lib/transfers/download-gate.ts';
import { type ByteRange, type Download, openDownload, resolveDownload } from '../../../lib/transfers/download-links.ts';
import { contentCorruptError } from '../../../lib/uploads/content.ts';
import type { Archive } from '../../../lib/zip/archives.ts';
import { clientIp } from '../../client-ip.ts';
import { parseRangeHeader } from '../../http/ranges.ts';
import { writesPerTurn } from '../../http/writes-per-turn.ts';
import { defineRoute } from '../../route.ts';
import { type AnyRequest, headerOf } from '../../types.ts';

/** A refused download is worth retrying soon: slots free up as other downloads end. */
const RETRY_AFTER_SECONDS = 5;

const REFUSALS: Record<DownloadRefusal, (subject: string) => string> = {
  downloads_per_ip: () => 'Too many downloads from your address at once. Retry when one has finished.',
  downloads_per_transfer: (subject) => `Too many downloads of this ${subject} at once. Retry in a moment.`,
  downloads_busy: () => 'Too many downloads in progress. Retry in a moment.',
};

/**
 * Headers of every response of a download link, errors included: the file is
 * an attachment, never sniffed, and if a browser renders it anyway it runs in
 * a sandbox with no script, no same-origin access and nothing loaded.
 */
export const DOWNLOAD_SAFETY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "sandbox; default-src 'none'",
};

/** The path of a signed link (`/v1/downloads/{token}`, `/v1/intake-downloads/{token}`). */
export const linkTokenParams = Joi.object<{ token: string }>({
  token: Joi.string()
    .max(1024)
    .pattern(/^[\w-]+\.[\w-]+$/, 'token')
    .required(),
});

/** What to undo once a download's response has ended, however it ended: its slot, its timer. */
const endings = new WeakMap<AnyRequest, () => void>();

/**
 * Takes one of the public download slots (per address, per transfer or intake, in all) for this
 * request, released when its response ends however it ends; past a bound, 429 with `Retry-After`.
 * Routes that call it declare `ext: endOfDownload`.
 */
export function holdDownloadSlot(
  request: AnyRequest,
  subject: { id: string; kind: 'transfer' | 'intake' | 'vault' | 'collection' },
): void {
  const { services } = request.server.app;
  const slot = services.downloads.gate.enter(clientIp(request, services.config), subject.id);
  if (!slot.ok) {
    throw new DomainError('rate_limited', REFUSALS[slot.reason](subject.kind), {
      retryAfterSeconds: RETRY_AFTER_SECONDS,
      details: { reason: slot.reason },
    });
  }
  endings.set(request, slot.release);
}

/** The route extension that undoes, once a download's response has ended, what limitDuration set up. */
const endOfDownload = {
  onPostResponse: {
    method: (request: AnyRequest, h: { continue: symbol }) => {
      endings.get(request)?.();
      return h.continue;
    },
  },
};

/**
 * Route options every streamed download shares: not hapi's socket timeout (the handler sets an
 * idle timeout once the body starts, `limitDuration`), no ranges of hapi's (the handler serves them
 * from the segments they need, and sends bodies as they are), the slot released at the end.
 */
export const streamedDownload = {
  timeout: { socket: false as const },
  response: { ranges: false },
  ext: endOfDownload,
};

/** The response that streams a file, or the range of it the request asked for. */
export function fileResponse(h: ResponseToolkit, content: Readable, download: Omit<Download, 'content'>) {
  // Damage past the first segment cuts the response short: the client never sees a clean end, and
  // an operator hears why. hapi listens to the stream only once it transmits: a failure before that
  // (the blob's next segment, read ahead while the response is prepared) would leave the response
  // hanging until a timeout, so it is caught here, whenever it came; already there, it is refused.
  if (content.errored instanceof IntegrityError) throw contentCorruptError();
  content.once('error', (error) => {
    if (error instanceof IntegrityError) h.request.log(['error', 'integrity'], `download cut off: ${error.message}`);
    h.request.raw.res.destroy();
  });
  const response = h
    .response(writesPerTurn(content, h.request.raw.res))
    .code(download.range ? 206 : 200)
    .compressed('identity');
  for (const [name, value] of Object.entries(headersOf(download))) response.header(name, value);
  return response;
}

export const downloadRoute = defineRoute({
  method: 'GET',
  path: '/v1/downloads/{token}',
  options: {
    id: 'shares.openDownload',
    plugins: { valise: { openapi: { errors: [403, 410, 416], binary: [200, 206] } } },
    auth: false,
    description: 'Download one file',
    notes:
      'Streams the file (decrypted in server mode). Supports a single HTTP Range. Links expire after 300 seconds. A client that reads nothing for `DOWNLOAD_IDLE_TIMEOUT` (60 s), or is still downloading after `DOWNLOAD_REQUEST_TIMEOUT` (6 h), is disconnected (resume with Range), and so is one that takes less than `DOWNLOAD_MIN_RATE` (4 KiB/s) over a `DOWNLOAD_RATE_WINDOW` (60 s) past the first. Past `DOWNLOADS_PER_IP` downloads at once from one address or `DOWNLOADS_PER_TRANSFER` of one transfer: 429 `rate_limited` with `Retry-After`. Stored content altered in storage: 410 `not_found` with `reason` `content_corrupt` before any byte, or the response is cut off before its end.',
    tags: ['api', 'shares'],
    validate: { params: linkTokenParams },
    ...streamedDownload,
  },
  handler: async (request, h) => {
    const { services } = request.server.app;
    const token = request.params.token;
    const limits = services.config.transfers.downloads;
    // The link names its transfer; a link that does not verify is refused by openDownload below.
    const link = verifyToken(services.keys.links, 'download', token);
    if (link.ok) holdDownloadSlot(request, { id: link.data.t ?? '', kind: 'transfer' });
    const target = await resolveDownload(services, token, {
      ip: clientIp(request, services.config),
      userAgent: headerOf(request, 'user-agent') ?? null,
    });
    const range = requestedRange(request, target.file.size);
    // Read through the downloads' own object-store pool, never the one uploads use.
    const download = await openDownload({ ...services, objects: services.downloads.objects }, target, range);
    limitDuration(request, limits);
    // Through a personal link, the recipient's download counts only once the file is sent whole.
    const counted = countDelivery(services, target, download);
    const res = request.raw.res;
    if (counted) {
      res.once('close', () =>
        counted
          .settle(res.writableFinished)
          .catch((error: Error) => request.log(['error', 'recipients'], error.stack ?? error.message)),
      );
    }
    return fileResponse(h, counted?.body ?? download.content, download);
  },
});

/** The single byte range a request's `Range` asks of a file of `size` bytes, or undefined for all of it; 416 when outside. */
export function requestedRange(request: AnyRequest, size: number): ByteRange | undefined {
  const range = parseRangeHeader(headerOf(request, 'range'), size);
  if (range === 'unsatisfiable') {
    throw new DomainError('validation_error', 'The requested range is outside the file.', {
      param: 'Range',
      kind: 'range_not_satisfiable',
      contentSize: size,
    });
  }
  return range ?? undefined;
}

/** The headers of a download's response: what it is, how much of it, and how to treat it. */
function headersOf(download: Omit<Download, 'content'>): Record<string, string> {
  const { range, size } = download;
  const headers: Record<string, string> = {
    'Content-Type': download.mimeType,
    'Content-Disposition': contentDisposition(download.name),
    'Accept-Ranges': 'bytes',
    'Cache-Control': 'private, no-store',
    ...DOWNLOAD_SAFETY_HEADERS,
  };
  if (!range) return { ...headers, 'Content-Length': String(size) };
  return {
    ...headers,
    'Content-Length': String(range.end - range.start + 1),
    'Content-Range': `bytes ${range.start}-${range.end}/${size}`,
  };
}

/** Content-Disposition for any file name: an ASCII fallback plus the exact UTF-8 name (RFC 6266 / 8187). */
export function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_') || 'download';
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/**
 * The response that streams an archive (lib/zip/archives.ts): its exact length known ahead, so
 * browsers show progress; no Range (an archive is made as it is sent, not stored).
 */
export function archiveResponse(h: ResponseToolkit, archive: Archive) {
  const response = h.response(archive.zip.stream).code(200).compressed('identity');
  const headers = {
    'Content-Type': 'application/zip',
    'Content-Disposition': contentDisposition(archive.filename),
    'Content-Length': String(archive.zip.plan.size),
    'Cache-Control': 'private, no-store',
    ...DOWNLOAD_SAFETY_HEADERS,
  };
  for (const [name, value] of Object.entries(headers)) response.header(name, value);
  return response;
}

/**
 * Disconnects a download whose client takes nothing for `idleMs` (Node counts each write the
 * socket completes as activity, so a client that reads slowly but steadily is not idle), that takes
 * less than `minRate` bytes a second over a window of `rateWindowMs` (the first window is its
 * grace: buffers fill), or that is still running `requestMs` after it arrived. Without the rate,
 * a reader taking a few bytes a minute would hold its slot until `requestMs`, and a few of them
 * the whole process's. Destroying the response makes hapi destroy the content stream, which
 * releases its object-store socket.
 */
export function limitDuration(
  request: AnyRequest,
  limits: { idleMs: number; requestMs: number; minRate: number; rateWindowMs: number },
) {
  const res = request.raw.res;
  const cutOff = (why: string) => () => {
    request.log(['download', 'timeout'], why);
    res.destroy();
  };
  res.setTimeout(limits.idleMs, cutOff(`nothing taken for ${limits.idleMs} ms`));
  const total = setTimeout(
    cutOff(`still running after ${limits.requestMs} ms`),
    Math.max(0, request.info.received + limits.requestMs - Date.now()),
  );
  const pace = paceCheck(request, limits, cutOff);
  const release = endings.get(request);
  endings.set(request, () => {
    clearTimeout(total);
    clearInterval(pace);
    release?.();
  });
}

/** Every `rateWindowMs`, cuts off a download whose client took less than `minRate` bytes a second meanwhile. */
function paceCheck(
  request: AnyRequest,
  limits: { minRate: number; rateWindowMs: number },
  cutOff: (why: string) => () => void,
): NodeJS.Timeout | undefined {
  const socket = request.raw.res.socket;
  if (limits.minRate === 0 || limits.rateWindowMs === 0 || !socket) return undefined;
  const least = (limits.minRate * limits.rateWindowMs) / 1000;
  let mark = socket.bytesWritten;
  const pace = setInterval(() => {
    const taken = socket.bytesWritten - mark;
    mark = socket.bytesWritten;
    // Only the client's slowness counts: with nothing waiting to be sent, the server is behind.
    if (taken < least && socket.writableLength > 0) {
      cutOff(`${taken} bytes taken in ${limits.rateWindowMs} ms, under ${limits.minRate} bytes/s`)();
    }
  }, limits.rateWindowMs);
  pace.unref();
  return pace;
}
