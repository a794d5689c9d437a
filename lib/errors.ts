// What a domain function refuses a request with. lib/ says what went wrong in
// the spec's words (the envelope's `code`, `message`, `param` and extra
// members) and, where the code alone does not say how to answer, which kind
// of refusal it is and when to try again. api/errors.ts alone turns that into
// a status, headers and the envelope.

/** The spec's error codes (spec: Errors). */
export const ERROR_CODES = [
  'missing_api_key',
  'invalid_api_key',
  'revoked_api_key',
  'expired_api_key',
  'mfa_required',
  'scope_missing',
  'ip_not_allowed',
  'forbidden',
  'validation_error',
  'not_found',
  'idempotency_conflict',
  'rate_limited',
  'internal_error',
  // Valise's addition to the spec's table: a component the service needs (the database, object
  // storage, Temporal) is not answering. 503 with Retry-After; retried like a 5xx (docs/errors.md).
  'service_unavailable',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * Refusals the code alone does not describe:
 * - `gone`: the resource ended for good (an expired link, a deleted transfer);
 * - `conflict`: the resource's present state forbids it (another upload runs, the transfer ended);
 * - `timed_out`: the client sent too slowly;
 * - `inapplicable`: the request makes no sense for this resource;
 * - `range_not_satisfiable`: the requested bytes are outside the content (see `contentSize`);
 * - `too_large`: the body is longer than the resource takes;
 * - `precondition_failed`: the client speaks a version of a protocol we do not (tus's `Tus-Resumable`);
 * - `checksum_mismatch`: the body does not match the checksum the client sent with it (tus's 460).
 */
export const ERROR_KINDS = [
  'gone',
  'conflict',
  'timed_out',
  'inapplicable',
  'range_not_satisfiable',
  'too_large',
  'precondition_failed',
  'checksum_mismatch',
] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

export type DomainErrorOptions = {
  /** The request field at fault. */
  param?: string | null;
  /** Extra members of the envelope's `error`, e.g. the sensitive scopes for mfa_required. */
  details?: Record<string, unknown>;
  kind?: ErrorKind;
  /** When trying again may succeed. */
  retryAfterSeconds?: number;
  /** The size of the content a range missed. */
  contentSize?: number;
};

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly param: string | null;
  readonly details: Record<string, unknown> | undefined;
  readonly kind: ErrorKind | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly contentSize: number | undefined;

  constructor(code: ErrorCode, message: string, options: DomainErrorOptions = {}) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.param = options.param ?? null;
    this.details = options.details;
    this.kind = options.kind;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.contentSize = options.contentSize;
  }
}

export const notFound = (what: string) => new DomainError('not_found', `No such ${what}.`);
