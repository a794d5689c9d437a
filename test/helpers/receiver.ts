import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

// A real webhook receiver on a loopback port: records every request (raw
// body and headers, for signature checks) and answers as the test says. It can
// go down (port closed: connection refused) and come back on the same port.
// With `tls`, it serves HTTPS as hooks.valise.test, the name scripts/test.sh
// maps to loopback (WEBHOOK_HOSTS) with a certificate the worker trusts, or
// with the `certificate` given (test/helpers/tls.ts makes an untrusted one).

const fixture = (name: string) => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));

export type Received = { path: string; headers: IncomingHttpHeaders; body: string; at: number };
export type Answer = { status: number; body?: string; delayMs?: number; headers?: Record<string, string> };

export type Receiver = {
  url: (path?: string) => string;
  port: number;
  received: Received[];
  /** Requests whose JSON body has this event id. */
  forEvent: (eventId: string) => Received[];
  answer: (respond: (request: Received) => Answer) => void;
  down: () => Promise<void>;
  up: () => Promise<void>;
  close: () => Promise<void>;
};

export async function startReceiver(
  options: { tls?: boolean; certificate?: { key: Buffer; cert: Buffer } } = {},
): Promise<Receiver> {
  const received: Received[] = [];
  let respond: (request: Received) => Answer = () => ({ status: 200, body: 'ok' });
  let server: Server | null = null;
  let port = 0;

  const listen = async () => {
    const handler: RequestListener = (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const entry: Received = {
          path: request.url ?? '/',
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        received.push(entry);
        const answer = respond(entry);
        setTimeout(() => {
          if (response.destroyed) return;
          response.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
          response.end(answer.body ?? '');
        }, answer.delayMs ?? 0);
      });
    };
    const instance: Server = options.tls
      ? createTlsServer(options.certificate ?? { key: fixture('key.pem'), cert: fixture('cert.pem') }, handler)
      : createServer(handler);
    await new Promise<void>((resolve, reject) => {
      instance.once('error', reject);
      instance.listen(port, '127.0.0.1', () => resolve());
    });
    port = (instance.address() as AddressInfo).port;
    server = instance;
  };

  const shut = async () => {
    const instance = server;
    server = null;
    if (!instance) return;
    instance.closeAllConnections();
    await new Promise<void>((resolve) => instance.close(() => resolve()));
  };

  await listen();
  return {
    url: (path = '/hook') =>
      options.tls ? `https://hooks.valise.test:${port}${path}` : `http://127.0.0.1:${port}${path}`,
    get port() {
      return port;
    },
    received,
    forEvent: (eventId) =>
      received.filter((entry) => {
        try {
          return (JSON.parse(entry.body) as { id?: string }).id === eventId;
        } catch {
          return false;
        }
      }),
    answer: (fn) => {
      respond = fn;
    },
    down: shut,
    up: listen,
    close: shut,
  };
}
