// Every failure the SDK reports is a ValiseError: API errors keep the spec's
// `code`, the HTTP status, the field at fault and the request id to quote to
// support; failures that never got an answer use the SDK's own codes.

/** Error codes of the spec's error table, then the SDK's own for calls that got no API answer. */
export type ValiseErrorCode =
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'revoked_api_key'
  | 'expired_api_key'
  | 'mfa_required'
  | 'scope_missing'
  | 'ip_not_allowed'
  | 'forbidden'
  | 'validation_error'
  | 'not_found'
  | 'idempotency_conflict'
  | 'rate_limited'
  | 'internal_error'
  /** Valise's 503: a component the service needs is not answering; retried like a 5xx. */
  | 'service_unavailable'
  /** No answer: DNS, refused or reset connection. */
  | 'connection_error'
  /** No answer within the configured timeout. */
  | 'timeout'
  /** The caller's AbortSignal fired. */
  | 'aborted'
  /** An answer that is not the API's error shape (a proxy's HTML page, say). */
  | 'unexpected_response'
  /** End-to-end content that does not decrypt: damaged, or the wrong key. */
  | 'integrity_error'
  /** A wrong argument to an SDK method, refused before any request; `param` names it. */
  | 'invalid_argument'
  /** A download would replace a file that exists (`FileExistsError`). */
  | 'file_exists'
  /** A code this SDK version does not know yet; `code` still holds it. */
  | (string & {});

export type ValiseErrorInit = {
  code: ValiseErrorCode;
  message: string;
  status?: number | undefined;
  param?: string | null | undefined;
  requestId?: string | null | undefined;
  docUrl?: string | null | undefined;
  /** The whole `error` object the API sent, including members specific to a code. */
  body?: Record<string, unknown> | undefined;
  retryAfterSeconds?: number | undefined;
  cause?: unknown;
};

export class ValiseError extends Error {
  readonly code: ValiseErrorCode;
  /** The HTTP status, or 0 when no answer came. */
  readonly status: number;
  readonly param: string | null;
  readonly requestId: string | null;
  readonly docUrl: string | null;
  readonly body: Record<string, unknown>;
  readonly retryAfterSeconds: number | undefined;

  constructor(init: ValiseErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code;
    this.status = init.status ?? 0;
    this.param = init.param ?? null;
    this.requestId = init.requestId ?? null;
    this.docUrl = init.docUrl ?? null;
    this.body = init.body ?? {};
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** 401: the key is missing, unknown, revoked or expired, or an MFA code is needed. */
export class AuthenticationError extends ValiseError {}
/** 403: a scope, the IP allow-list or the workspace forbids the call. */
export class PermissionError extends ValiseError {}
/** 404 or 410: absent, out of the key's reach, or gone. */
export class NotFoundError extends ValiseError {}
/** 400 or 422: the request itself is wrong; `param` names the field. */
export class ValidationError extends ValiseError {}
/** 409: an idempotency conflict, a concurrent upload, a resume from the wrong offset. */
export class ConflictError extends ValiseError {}
/** 429: over a quota; `retryAfterSeconds` says when to come back. */
export class RateLimitError extends ValiseError {}
/** 5xx: the service failed. */
export class ServerError extends ValiseError {}
/** No answer at all: connection failure, timeout or abort. */
export class ConnectionError extends ValiseError {}

/**
 * A wrong argument, caught by the SDK before any request is made: `param` names it (`files[2]`,
 * `baseUrl`, `to`) and the message starts with that name, says what was expected and what came.
 */
export class InvalidArgumentError extends ValiseError {
  constructor(param: string, message: string, cause?: unknown) {
    super({ code: 'invalid_argument', param, message: `${param}: ${message}`, cause });
  }
}

/** A download would replace an existing file; pass `overwrite: true` to the sink to allow it. */
export class FileExistsError extends ValiseError {
  readonly path: string;

  constructor(path: string) {
    super({ code: 'file_exists', message: `${path} already exists; it was left as it is` });
    this.path = path;
  }
}

type ErrorClass = new (init: ValiseErrorInit) => ValiseError;

function classFor(status: number): ErrorClass {
  if (status === 401) return AuthenticationError;
  if (status === 403) return PermissionError;
  if (status === 404 || status === 410) return NotFoundError;
  if (status === 400 || status === 413 || status === 415 || status === 422) return ValidationError;
  if (status === 409) return ConflictError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return ServerError;
  return ValiseError;
}

/** Builds the error for a non-2xx answer from its status, headers and (already read) body text. */
export function errorFromResponse(status: number, headers: Headers, text: string): ValiseError {
  const requestId = headers.get('x-request-id');
  const retryAfter = parseRetryAfter(headers.get('retry-after'));
  const ErrorType = classFor(status);
  const envelope = parseJson(text);
  const error = isRecord(envelope) && isRecord(envelope.error) ? envelope.error : undefined;
  if (!error || typeof error.code !== 'string') {
    return new ErrorType({
      code: 'unexpected_response',
      status,
      requestId,
      retryAfterSeconds: retryAfter,
      message: `HTTP ${status} without an API error body: ${text.slice(0, 200)}`,
    });
  }
  return new ErrorType({
    code: error.code,
    message: typeof error.message === 'string' ? error.message : `HTTP ${status} ${error.code}`,
    status,
    param: typeof error.param === 'string' ? error.param : null,
    requestId: typeof error.request_id === 'string' ? error.request_id : requestId,
    docUrl: typeof error.doc_url === 'string' ? error.doc_url : null,
    body: error,
    retryAfterSeconds: retryAfter,
  });
}

/** `Retry-After` as seconds: an integer, or an HTTP date. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null; // not JSON: the caller reports it as unexpected_response with the text itself
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
