import {
  expectDuration,
  expectFunction,
  expectHttpUrl,
  expectInteger,
  expectObject,
  expectString,
} from './arguments.ts';
import { ConnectionError, errorFromResponse, InvalidArgumentError, RateLimitError, ValiseError } from './errors.ts';

// The request core every resource goes through: authentication, JSON, timeouts,
// retries with backoff and jitter, Retry-After, and idempotency keys.

export type ValiseOptions = {
  /** An API key (`svc_live_…`, `svc_test_…`, …). Optional for public calls (shares, welcome). */
  apiKey?: string | undefined;
  /** Where the API answers, e.g. `https://api.valise.dev` or `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Per attempt, in milliseconds; default 60 000. Uploads and downloads use `transferTimeoutMs`. */
  timeoutMs?: number | undefined;
  /** Idle limit of an upload or download stream in ms (no byte moved for that long); default 120 000. */
  transferTimeoutMs?: number | undefined;
  /** Retries after the first attempt for 429, 5xx and network failures; default 3. */
  maxRetries?: number | undefined;
  /** First backoff delay in ms, doubled each retry (with jitter); default 500. */
  retryBaseDelayMs?: number | undefined;
  /** Longest single wait, backoff or Retry-After, in ms; a longer Retry-After is not waited for. Default 60 000. */
  retryMaxDelayMs?: number | undefined;
  /** A fetch implementation; default `globalThis.fetch`. */
  fetch?: typeof fetch | undefined;
  /**
   * Upload each file as PUTs of about this many bytes, each committed by the server, instead of one
   * streamed PUT: a multiple of 8 MiB, the smallest part size. Each PUT holds as many whole parts
   * of the file (its upload URL's `part_size`) as fit, and at least one. Default: 8 MiB in
   * browsers, where streaming request bodies need HTTP/2 (Chromium) or do not exist; `null`
   * (streamed) elsewhere.
   */
  uploadChunkBytes?: number | null | undefined;
};

/**
 * The server's part size for every file of up to 10,000 of them (78 GiB); larger files have larger
 * parts, given by their upload URL's `part_size` (docs/transfers.md).
 */
export const UPLOAD_PART_BYTES = 8 * 1024 * 1024;

function inBrowser(): boolean {
  const scope = globalThis as { document?: unknown; WorkerGlobalScope?: unknown };
  return scope.document !== undefined || scope.WorkerGlobalScope !== undefined;
}

export type RequestOptions = {
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number | undefined;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number | undefined;
  /** Cancels the call, its retries and waits included. */
  signal?: AbortSignal | undefined;
  /** For writes: the key to use instead of a generated one (e.g. to make a call idempotent across processes). */
  idempotencyKey?: string | undefined;
};

export type QueryValue = string | number | boolean | null | undefined;

export type RequestSpec = RequestOptions & {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** A path under `baseUrl` (`/v1/transfers`) or an absolute URL (an upload or download link). */
  path: string;
  query?: Record<string, QueryValue> | undefined;
  body?: unknown;
  /** Whether to send the API key; default true. Links that carry their own token send none. */
  authenticate?: boolean | undefined;
  headers?: Record<string, string> | undefined;
};

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export class HttpClient {
  readonly baseUrl: string;
  readonly transferTimeoutMs: number;
  readonly uploadChunkBytes: number | null;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: ValiseOptions) {
    checkOptions(options);
    this.baseUrl = String(options.baseUrl).replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.transferTimeoutMs = options.transferTimeoutMs ?? 120_000;
    this.uploadChunkBytes =
      options.uploadChunkBytes === undefined ? (inBrowser() ? UPLOAD_PART_BYTES : null) : options.uploadChunkBytes;
    const chunk = this.uploadChunkBytes;
    if (chunk !== null && !(Number.isSafeInteger(chunk) && chunk > 0 && chunk % UPLOAD_PART_BYTES === 0)) {
      throw new InvalidArgumentError(
        'uploadChunkBytes',
        `expected a positive multiple of ${UPLOAD_PART_BYTES} (the smallest part size), or null; got ${String(chunk)}`,
      );
    }
    this.#maxRetries = options.maxRetries ?? 3;
    this.#baseDelayMs = options.retryBaseDelayMs ?? 500;
    this.#maxDelayMs = options.retryMaxDelayMs ?? 60_000;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** A JSON call, retried when safe, resolving to the parsed body. */
  async json<T>(spec: RequestSpec): Promise<T> {
    const response = await this.send(spec);
    const text = await response.text();
    if (!text) return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch (cause) {
      throw new ValiseError({
        code: 'unexpected_response',
        status: response.status,
        requestId: response.headers.get('x-request-id'),
        message: `Expected JSON from ${spec.method} ${spec.path}, got: ${text.slice(0, 200)}`,
        cause,
      });
    }
  }

  /**
   * Sends a request and returns the successful Response, body unread. Non-2xx answers become
   * ValiseErrors. JSON bodies are retried; a stream body cannot be replayed, so it is sent once.
   */
  async send(spec: RequestSpec): Promise<Response> {
    const url = this.url(spec.path, spec.query);
    const headers: Record<string, string> = { accept: 'application/json', ...spec.headers };
    if (spec.authenticate !== false && this.#apiKey) headers.authorization = `Bearer ${this.#apiKey}`;
    // One key per call, reused by every retry, so a write that reached the server runs once.
    // Idempotency keys belong to the calling key's workspace: unauthenticated links have none.
    if (WRITE_METHODS.has(spec.method) && (spec.authenticate !== false || spec.idempotencyKey)) {
      headers['idempotency-key'] ??= spec.idempotencyKey ?? newIdempotencyKey();
    }
    const streaming = spec.body instanceof ReadableStream;
    // Bytes (a chunk of an upload) are sent as they are; the upload loop, not this one, retries them.
    const binary = streaming || spec.body instanceof Uint8Array;
    let body: RequestInit['body'];
    if (binary) body = spec.body as ReadableStream<Uint8Array> | Uint8Array<ArrayBuffer>;
    else if (spec.body !== undefined) {
      body = JSON.stringify(spec.body);
      headers['content-type'] ??= 'application/json';
    }
    const maxRetries = binary ? 0 : (spec.maxRetries ?? this.#maxRetries);

    for (let attempt = 0; ; attempt++) {
      let failure: ValiseError;
      const timeout = this.attemptSignal(spec.signal, spec.timeoutMs ?? this.#timeoutMs);
      try {
        const init: RequestInit & { duplex?: 'half' } = { method: spec.method, headers, body, signal: timeout.signal };
        if (streaming) init.duplex = 'half'; // required by fetch for a streamed request body
        const response = await this.#fetch(url, init);
        timeout.keepUntilBodyRead(response);
        if (response.ok) return response;
        // An answer sent before the request's body was all read (a 409 on a busy upload) comes with
        // the connection closed, which may cut its own body short: the status still says it.
        failure = errorFromResponse(response.status, response.headers, await response.text().catch(() => ''));
      } catch (cause) {
        timeout.clear();
        failure = connectionFailure(cause, spec, timeout.timedOut());
      }
      const delay = this.retryDelay(failure, attempt, maxRetries);
      if (delay === undefined) throw failure;
      await sleep(delay, spec.signal);
    }
  }

  url(path: string, query?: Record<string, QueryValue>): string {
    const url = new URL(/^https?:\/\//.test(path) ? path : this.baseUrl + path);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    return url.toString();
  }

  /** How long to wait before the next attempt, or undefined to give up. */
  private retryDelay(error: ValiseError, attempt: number, maxRetries: number): number | undefined {
    if (attempt >= maxRetries) return undefined;
    if (error.code === 'aborted') return undefined;
    const retryable = error.status === 429 || error.status >= 500 || error instanceof ConnectionError;
    if (!retryable) return undefined;
    // A usage cap that is exhausted is also a 429, but without Retry-After: waiting will not help.
    if (error instanceof RateLimitError && error.retryAfterSeconds === undefined) return undefined;
    if (error.retryAfterSeconds !== undefined) {
      const wait = error.retryAfterSeconds * 1000;
      return wait > this.#maxDelayMs ? undefined : wait;
    }
    // Exponential backoff with "equal jitter": at least half the step, so retries still spread out.
    const step = Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** attempt);
    return step / 2 + Math.random() * (step / 2);
  }

  private attemptSignal(outer: AbortSignal | undefined, timeoutMs: number) {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs);
    const onAbort = () => controller.abort(outer?.reason);
    if (outer?.aborted) onAbort();
    outer?.addEventListener('abort', onAbort, { once: true });
    const clear = () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    };
    return {
      signal: controller.signal,
      timedOut: () => timedOut,
      clear,
      // The timeout covers the answer's headers; the body of a JSON answer is read right away
      // and a streamed body has its own idle timeout, so the timer stops here.
      keepUntilBodyRead: (_response: Response) => clearTimeout(timer),
    };
  }
}

/** The client's options, checked once, so a typo fails here rather than at the first call. */
function checkOptions(options: unknown): asserts options is ValiseOptions {
  expectObject(options, 'options');
  expectHttpUrl(options.baseUrl, 'baseUrl', 'where the API answers, e.g. https://valise.example.com');
  expectString(options.apiKey, 'apiKey', true);
  expectDuration(options.timeoutMs, 'timeoutMs');
  expectDuration(options.transferTimeoutMs, 'transferTimeoutMs');
  expectInteger(options.maxRetries, 'maxRetries', 0);
  expectDuration(options.retryBaseDelayMs, 'retryBaseDelayMs', true);
  expectDuration(options.retryMaxDelayMs, 'retryMaxDelayMs', true);
  expectFunction(options.fetch, 'fetch', 'a fetch implementation', true);
}

function connectionFailure(cause: unknown, spec: RequestSpec, timedOut: boolean): ValiseError {
  if (cause instanceof ValiseError) return cause;
  const where = `${spec.method} ${spec.path}`;
  if (timedOut) return new ConnectionError({ code: 'timeout', message: `${where} timed out`, cause });
  if (spec.signal?.aborted) return new ConnectionError({ code: 'aborted', message: `${where} was aborted`, cause });
  const reason = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : '';
  return new ConnectionError({ code: 'connection_error', message: `${where} failed: ${reason}`, cause });
}

export function newIdempotencyKey(): string {
  return `sdk_${globalThis.crypto.randomUUID()}`;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortError(signal: AbortSignal | undefined): ValiseError {
  return new ConnectionError({ code: 'aborted', message: 'The call was aborted', cause: signal?.reason });
}
