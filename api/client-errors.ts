import type { Server } from '@hapi/hapi';
import { SCHEMA } from '../lib/scim/resources.ts';
import { isScimProtocolPath, type ScimErrorBody } from './errors.ts';
import { newRequestId } from './request-id.ts';
import { API_REVISION } from './version.ts';

// Requests Node's HTTP server refuses before hapi sees them (headers over 16 KiB, malformed
// request lines, a head that took too long) would get Node's bare answer. Answer them with the
// envelope and a request id like every other error, or with SCIM's error on the SCIM protocol's
// paths, where every answer is SCIM's.

/** The path of the request line the parser refused, when it got that far (`error.rawPacket`). */
function refusedPath(error: NodeJS.ErrnoException): string | undefined {
  const raw = (error as { rawPacket?: unknown }).rawPacket;
  if (!Buffer.isBuffer(raw)) return undefined;
  return /^[A-Z]+ ([^\s?#]+)/.exec(raw.toString('latin1', 0, 16 * 1024))?.[1];
}
type ClientErrorAnswer = { status: number; reason: string; message: string };

const NOT_HTTP: ClientErrorAnswer = { status: 400, reason: 'Bad Request', message: 'The request is not valid HTTP.' };

/** What the parser's refusals are answered, by Node's error code; anything else is NOT_HTTP. */
const ANSWERS: Record<string, ClientErrorAnswer> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: 'Request Header Fields Too Large',
    message: 'The request headers are too large.',
  },
  // The request head took longer than REQUEST_HEADERS_TIMEOUT (api/server.ts): a client too slow, or a slow-loris.
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    reason: 'Request Timeout',
    message: 'The request headers took too long to arrive.',
  },
};

export function answerClientErrors(server: Server, docsBaseUrl: string) {
  server.listener.removeAllListeners('clientError');
  server.listener.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    // A response already in flight on this connection cannot be answered cleanly.
    if (!socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const answer = ANSWERS[error.code ?? ''] ?? NOT_HTTP;
    const { status, message } = answer;
    const requestId = newRequestId();
    const path = refusedPath(error);
    const scim = path !== undefined && isScimProtocolPath(path);
    const scimBody: ScimErrorBody = {
      schemas: [SCHEMA.error],
      status: String(status),
      ...(status === 400 ? { scimType: 'invalidSyntax' } : {}),
      detail: message,
    };
    const body = JSON.stringify(
      scim
        ? scimBody
        : {
            error: {
              code: 'validation_error',
              message,
              param: null,
              doc_url: `${docsBaseUrl}/errors#validation_error`,
              request_id: requestId,
            },
          },
    );
    socket.end(
      [
        `HTTP/1.1 ${status} ${answer.reason}`,
        `Content-Type: ${scim ? 'application/scim+json' : 'application/json'}; charset=utf-8`,
        `Content-Length: ${Buffer.byteLength(body)}`,
        `X-Request-Id: ${requestId}`,
        `X-Service-Api-Version: ${API_REVISION}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  });
}
