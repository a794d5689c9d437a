import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Valise, ValiseError } from '../../../sdk/src/index.ts';
import { decodeSecret } from '../../../sdk/src/webhook-signature.ts';
import { expectPositionals, parseCommand } from '../args.ts';
import type { Context } from '../context.ts';
import { UsageError } from '../exit-codes.ts';
import { note, printJsonLine, printLine } from '../output.ts';
import { visible } from '../terminal.ts';

// `valise listen`: a local webhook receiver for developers, like `stripe
// listen`. It checks each delivery's signature with the webhook's secret and
// forwards the good ones, headers and raw body unchanged, to the app being
// built; the app's answer goes back to the sender. Bad signatures are answered
// 400 and never reach the app, so the app sees exactly what production sends.

const USAGE = 'valise listen --forward-to URL [--secret whsec_…]… [--port N] [--host ADDRESS]';

/** Headers that describe one hop, not the message: recomputed for the forwarded request. */
const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade']);

export async function listen(argv: string[], ctx: Context): Promise<void> {
  const { values, positionals } = parseCommand(
    argv,
    {
      'forward-to': { type: 'string' },
      secret: { type: 'string', multiple: true },
      port: { type: 'string' },
      host: { type: 'string' },
    },
    USAGE,
  );
  expectPositionals(positionals, [], USAGE);
  const forwardTo = values['forward-to'];
  if (!forwardTo) throw new UsageError('--forward-to is required.', `Usage: ${USAGE}`);
  if (!URL.canParse(forwardTo)) throw new UsageError(`--forward-to is not a URL: ${forwardTo}`);
  const secrets = values.secret ?? (process.env.VALISE_WEBHOOK_SECRET ? [process.env.VALISE_WEBHOOK_SECRET] : []);
  if (secrets.length === 0) {
    throw new UsageError('A signing secret is needed: --secret whsec_… (or VALISE_WEBHOOK_SECRET).', `Usage: ${USAGE}`);
  }
  // A mistyped secret is said now, not as a refusal of every delivery; the message never quotes it.
  for (const secret of secrets) {
    try {
      decodeSecret(secret);
    } catch (error) {
      throw new UsageError(`--secret: ${(error as Error).message.replace(/^secret: /, '')}`, `Usage: ${USAGE}`);
    }
  }
  const port = values.port === undefined ? 4242 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port is not a port: ${values.port}`);

  const log = (entry: Record<string, unknown>, human: string) => (ctx.json ? printJsonLine(entry) : printLine(human));

  const server = createServer((request, response) => {
    handle(request, response, { forwardTo, secrets, log }).catch((error: unknown) => {
      note(`error: ${(error as Error).message}`);
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, values.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  // The first line says where to point the webhook (tests read the port from it).
  log({ object: 'listener', url, forward_to: forwardTo }, `Listening on ${url}, forwarding to ${forwardTo}`);
  if (!ctx.json) note('Verifying signatures; press Ctrl-C to stop.');

  await new Promise<void>((resolve) => {
    const stop = () => server.close(() => resolve());
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

type Options = {
  forwardTo: string;
  secrets: string[];
  log: (entry: Record<string, unknown>, human: string) => void;
};

async function handle(request: IncomingMessage, response: ServerResponse, options: Options): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const eventId = String(request.headers['webhook-id'] ?? '-');

  let type = '-';
  try {
    const event = await Valise.webhooks.verify(new Uint8Array(body), toHeaders(request), options.secrets);
    type = event.type;
  } catch (error) {
    // A WebhookVerificationError names what failed, a signed body that is not JSON included.
    if (!(error instanceof ValiseError)) throw error;
    const { message } = error;
    options.log(
      { object: 'delivery', event_id: eventId, verified: false, error: message, forwarded: false },
      `✗ ${eventId}  rejected: ${visible(message)}`,
    );
    response.writeHead(400, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { code: 'webhook_verification_failed', message } }));
    return;
  }

  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (HOP_BY_HOP.has(name) || value === undefined) continue;
    headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  let status: number;
  let answer: Buffer;
  let answerType: string | null = null;
  try {
    const forwarded = await fetch(options.forwardTo, { method: request.method ?? 'POST', headers, body });
    status = forwarded.status;
    answer = Buffer.from(await forwarded.arrayBuffer());
    answerType = forwarded.headers.get('content-type');
  } catch (error) {
    const reason =
      error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
    options.log(
      { object: 'delivery', event_id: eventId, type, verified: true, forwarded: false, error: reason },
      `! ${eventId}  ${visible(type)}  could not forward: ${visible(reason)}`,
    );
    response.writeHead(502, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ error: { code: 'forward_failed', message: reason } }));
    return;
  }
  options.log(
    { object: 'delivery', event_id: eventId, type, verified: true, forwarded: true, status },
    `→ ${eventId}  ${visible(type)}  ${options.forwardTo} answered ${status}`,
  );
  response.writeHead(status, answerType ? { 'content-type': answerType } : {});
  response.end(answer);
}

function toHeaders(request: IncomingMessage): Record<string, string | string[] | undefined> {
  return request.headers;
}
