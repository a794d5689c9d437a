import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { type Lookup, resolveTarget, TargetRefusedError } from '../net/ssrf.ts';

// One outbound POST to a customer-chosen URL (webhook deliveries and rule
// actions). The target is resolved and checked once, and the socket connects
// to exactly that address (DNS rebinding cannot swap it); Host and TLS SNI keep
// the name, so certificates are verified as usual. Redirects are answers, not
// instructions: a 3xx is a failed attempt. The whole exchange has one deadline.

export const RESPONSE_EXCERPT_BYTES = 1024;
// Beyond this much response body the socket is dropped rather than drained for reuse.
const DRAIN_LIMIT_BYTES = 64 * 1024;

export type PostOptions = {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
  /** `Valise-Webhooks/1.0 (+<this instance's docs>/webhooks)`: config.webhooks.userAgent. */
  userAgent: string;
  lookup?: Lookup;
  /**
   * WEBHOOK_HOSTS (dev and tests): the only names that resolve, and no
   * address literal but loopback is reachable, so not one packet can leave the
   * machine whatever URL a test or a fuzzer registers.
   */
  hosts?: ReadonlyMap<string, string> | undefined;
};

/** The resolver of WEBHOOK_HOSTS: a fixed table, never the network. */
export function fixedLookup(hosts: ReadonlyMap<string, string>): Lookup {
  return async (hostname) => {
    const address = hosts.get(hostname.toLowerCase());
    if (address === undefined)
      throw Object.assign(new Error(`${hostname} is not in WEBHOOK_HOSTS`), { code: 'ENOTFOUND' });
    return [{ address, family: isIP(address) }];
  };
}

export type PostResult = {
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  /** Why it failed, when it did without an HTTP answer (or with a non-2xx one). */
  error: string | null;
  /** The first KiB of the answer, as text. */
  responseBody: string | null;
};

// Idle connections are dropped after 4 s, before the 5 s after which common servers (Node's
// default keepAliveTimeout among them) close theirs, so a reused socket is rarely a closing one.
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 }),
};

export async function postJson(options: PostOptions): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const refused = (message: string): PostResult => ({
    ok: false,
    statusCode: null,
    durationMs: elapsed(),
    error: `target_refused: ${message}`,
    responseBody: null,
  });
  const timedOut = (): PostResult => ({
    ok: false,
    statusCode: null,
    durationMs: elapsed(),
    error: `timeout: no complete answer within ${options.timeoutMs} ms`,
    responseBody: null,
  });
  const lookup = options.hosts ? fixedLookup(options.hosts) : options.lookup;
  // The name's lookup counts against the timeout: a resolver that never answers would otherwise
  // hold a sender's slot (and outlast its lease) for as long as the system resolver retries.
  let lookupTimer: NodeJS.Timeout | undefined;
  let found: Awaited<ReturnType<typeof resolveTarget>> | null;
  try {
    found = await Promise.race([
      resolveTarget(options.url, { allowPrivate: options.allowPrivate, ...(lookup ? { lookup } : {}) }),
      new Promise<null>((resolve) => (lookupTimer = setTimeout(() => resolve(null), options.timeoutMs))),
    ]);
  } catch (error) {
    if (!(error instanceof TargetRefusedError)) throw error;
    return refused(error.message);
  } finally {
    clearTimeout(lookupTimer);
  }
  if (found === null) return timedOut();
  const target = found;
  if (options.hosts && target.addressClass !== 'loopback') {
    return refused(`${target.address} is not a loopback address, and WEBHOOK_HOSTS allows no other`);
  }

  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const protocol = target.url.protocol === 'https:' ? 'https:' : 'http:';
  const send = protocol === 'https:' ? https.request : http.request;

  return new Promise<PostResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<PostResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ...result, durationMs: elapsed() });
    };
    let request: http.ClientRequest;
    const deadline = setTimeout(
      () => {
        request.destroy();
        finish(timedOut());
      },
      Math.max(0, options.timeoutMs - elapsed()),
    );

    const attempt = (isRetry: boolean) => {
      request = send(target.url, {
        method: 'POST',
        agent: agents[protocol],
        lookup: pinned,
        headers: {
          ...options.headers,
          'user-agent': options.userAgent,
          'content-length': String(Buffer.byteLength(options.body)),
        },
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        // A kept-alive socket the receiver closed as we reused it: the request never reached
        // it, so one retry on a new connection is safe (the race Node's docs describe).
        if (request.reusedSocket && error.code === 'ECONNRESET' && !isRetry && !settled) return attempt(true);
        finish({ ok: false, statusCode: null, error: describeNetworkError(error), responseBody: null });
      });
      request.on('response', (response) => {
        const statusCode = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let kept = 0;
        let seen = 0;
        response.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (kept < RESPONSE_EXCERPT_BYTES) {
            const part = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - kept);
            chunks.push(part);
            kept += part.length;
          }
          if (seen > DRAIN_LIMIT_BYTES) response.destroy();
        });
        const settle = () => {
          const ok = statusCode >= 200 && statusCode < 300;
          finish({
            ok,
            statusCode,
            error: ok ? null : `http_status: the receiver answered ${statusCode}`,
            responseBody: excerpt(Buffer.concat(chunks)),
          });
        };
        response.on('end', settle);
        response.on('close', settle);
        response.on('error', settle);
      });
      request.end(options.body);
    };
    attempt(false);
  });
}

/** The excerpt is stored and shown as text: invalid UTF-8 becomes U+FFFD, NUL is dropped (PostgreSQL text refuses it). */
function excerpt(bytes: Buffer): string | null {
  if (bytes.length === 0) return null;
  return bytes.toString('utf8').replaceAll('\u0000', '');
}

function describeNetworkError(error: NodeJS.ErrnoException): string {
  const code = error.code ?? 'ERROR';
  if (code === 'ECONNREFUSED') return 'connection_refused: nothing is listening at the target';
  if (code === 'ECONNRESET') return 'connection_reset: the receiver closed the connection';
  if (code.startsWith('ERR_TLS') || code.includes('CERT') || code === 'DEPTH_ZERO_SELF_SIGNED_CERT') {
    return `tls_error: ${error.message}`;
  }
  return `network_error: ${code} ${error.message}`;
}

/** Closes idle keep-alive sockets, so a stopping process is not held open by them. */
export function closeAgents(): void {
  agents['http:'].destroy();
  agents['https:'].destroy();
}
