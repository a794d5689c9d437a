import { randomBytes } from 'node:crypto';
import type { Server } from '@hapi/hapi';
import { SCHEMA } from '../lib/scim/resources.ts';
import { isScimProtocolPath, type ScimErrorBody } from './errors.ts';
import { API_REVISION } from './version.ts';

// Requests Node's HTTP parser rejects (headers over 16 KiB, malformed request
// lines) never reach hapi, which answers them with a bare 400. Answer them
// with the envelope and a request id like every other error, or with SCIM's
// error on the SCIM protocol's paths, where every answer is SCIM's.

/** The path of the request line the parser refused, when it got that far (`error.rawPacket`). */
function refusedPath(error: NodeJS.ErrnoException): string | undefined {
  const raw = (error as { rawPacket?: unknown }).rawPacket;
  if (!Buffer.isBuffer(raw)) return undefined;
  return /^[A-Z]+ ([^\s?#]+)/.exec(raw.toString('latin1', 0, 16 * 1024))?.[1];
}
export function answerClientErrors(server: Server, docsBaseUrl: string) {
  server.listener.removeAllListeners('clientError');
  server.listener.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    // A response already in flight on this connection cannot be answered cleanly.
    if (!socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? 431 : 400;
    const requestId = `req_${randomBytes(12).toString('base64url')}`;
    const message = tooLarge ? 'The request headers are too large.' : 'The request is not valid HTTP.';
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
        `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}`,
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
