import { randomBytes } from 'node:crypto';
import type { Server } from '@hapi/hapi';
import { API_REVISION } from './version.ts';

// Requests Node's HTTP parser rejects (headers over 16 KiB, malformed request
// lines) never reach hapi, which answers them with a bare 400. Answer them
// with the envelope and a request id like every other error.
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
    const body = JSON.stringify({
      error: {
        code: 'validation_error',
        message: tooLarge ? 'The request headers are too large.' : 'The request is not valid HTTP.',
        param: null,
        doc_url: `${docsBaseUrl}/errors#validation_error`,
        request_id: requestId,
      },
    });
    socket.end(
      [
        `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}`,
        'Content-Type: application/json; charset=utf-8',
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
