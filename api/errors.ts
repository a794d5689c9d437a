import type Boom from '@hapi/boom';
import type { Request, ResponseToolkit } from '@hapi/hapi';
import type { ValidationError } from 'joi';
import { DomainError, type ErrorCode, type ErrorKind } from '../lib/errors.ts';
import { SCHEMA } from '../lib/scim/resources.ts';

// The one place an error becomes a status, headers and the spec's envelope.
// lib/ and the API's own steps throw DomainError; hapi's own errors (Boom) and
// anything else are turned into a safe 4xx or a generic 500 here, never
// leaking internals.

/** The status of each code (spec: Errors). */
const STATUS: Record<ErrorCode, number> = {
  missing_api_key: 401,
  invalid_api_key: 401,
  revoked_api_key: 401,
  expired_api_key: 401,
  mfa_required: 401,
  scope_missing: 403,
  ip_not_allowed: 403,
  forbidden: 403,
  validation_error: 400,
  not_found: 404,
  idempotency_conflict: 409,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
};

/** How soon a client may retry once a component the service needs stopped answering. */
const UNAVAILABLE_RETRY_SECONDS = 2;

/** A kind of refusal overrides its code's status. */
const KIND_STATUS: Record<ErrorKind, number> = {
  gone: 410,
  conflict: 409,
  timed_out: 408,
  inapplicable: 422,
  range_not_satisfiable: 416,
  too_large: 413,
  precondition_failed: 412,
  // tus 1.0's checksum extension: not an HTTP status of any RFC.
  checksum_mismatch: 460,
};

/** The status and headers that answer a domain error. */
export function answerTo(error: DomainError): { status: number; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) headers['Retry-After'] = String(error.retryAfterSeconds);
  if (error.contentSize !== undefined) headers['Content-Range'] = `bytes */${error.contentSize}`;
  return { status: error.kind ? KIND_STATUS[error.kind] : STATUS[error.code], headers };
}

export type ErrorEnvelope = {
  error: {
    code: ErrorCode;
    message: string;
    param: string | null;
    doc_url: string | null;
    request_id: string | null;
    [extra: string]: unknown;
  };
};

/** Renders what a request failed with; hapi hands every thrown error over as Boom (DomainError included, boomified). */
export function renderError(error: Boom.Boom | DomainError, requestId: string, docsBaseUrl: string) {
  if (isDependencyUnavailable(error)) {
    return renderError(
      new DomainError(
        'service_unavailable',
        'A component the service needs is not answering. Retry in a few seconds; nothing of this request was kept unless its answer said so.',
        { retryAfterSeconds: UNAVAILABLE_RETRY_SECONDS },
      ),
      requestId,
      docsBaseUrl,
    );
  }
  if (isDatabaseDataException(error)) {
    // Schemas should stop such input first; if one slips through, it is still the client's input.
    return renderError(
      new DomainError('validation_error', 'A value in the request is out of range or cannot be stored.'),
      requestId,
      docsBaseUrl,
    );
  }
  // Only DomainError carries our words; hapi's own errors (payload parsing,
  // decompression) may carry arbitrary objects that must not leak through.
  const domain = error instanceof DomainError ? error : null;
  const { status, headers } =
    error instanceof DomainError ? answerTo(error) : { status: error.output.statusCode, headers: {} };
  const code = domain?.code ?? codeForStatus(status);
  const message =
    status >= 500 && code === 'internal_error'
      ? 'Something went wrong on our side. Quote the request id if you contact support.'
      : error instanceof DomainError
        ? error.message
        : messageFor(error, status);
  const body: ErrorEnvelope = {
    error: {
      code,
      message,
      param: domain?.param ?? null,
      doc_url: `${docsBaseUrl}/errors#${code}`,
      request_id: requestId,
      ...(domain?.details ?? {}),
    },
  };
  return { status, body, headers };
}

/**
 * The SCIM protocol's routes (RFC 7644), the base URL an identity provider is given included: every
 * answer there, errors too, is SCIM's. The token and audit routes under /v1/scim are API-key routes
 * and answer the spec's envelope.
 */
export function isScimProtocolPath(path: string): boolean {
  if (path === '/v1/scim' || path === '/v1/scim/') return true;
  return path.startsWith('/v1/scim/') && !/^\/v1\/scim\/(?:tokens|audit)(?:\/|$)/.test(path);
}

export type ScimErrorBody = { schemas: string[]; status: string; scimType?: string; detail: string };

/**
 * An error on a SCIM route as RFC 7644 §3.12 has it: `status` as a string, `scimType` where one
 * applies (a domain error's own, else `invalidValue` for a 400), `detail`; the same status and
 * headers as the envelope would have. `code` is the envelope's, for the audit.
 */
export function renderScimError(error: Boom.Boom | DomainError, requestId: string, docsBaseUrl: string) {
  const rendered = renderError(error, requestId, docsBaseUrl);
  const given = rendered.body.error.scimType;
  const scimType = typeof given === 'string' ? given : rendered.status === 400 ? 'invalidValue' : undefined;
  const body: ScimErrorBody = {
    schemas: [SCHEMA.error],
    status: String(rendered.status),
    ...(scimType ? { scimType } : {}),
    detail: rendered.body.error.message,
  };
  return { status: rendered.status, headers: rendered.headers, body, code: rendered.body.error.code };
}

/** Errors of a connection (Node's) that mean the other side is down or went away. */
const CONNECTION_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);
/**
 * slonik's errors for a connection it could not get or lost, and for a statement the database did
 * not answer in time (locked rows, an overloaded server: it passes as such moments pass).
 */
const POOL_FAILURES = new Set([
  'ConnectionError',
  'BackendTerminatedError',
  'BackendTerminatedUnexpectedlyError',
  'StatementTimeoutError',
]);

/**
 * A component the service needs is down or restarting, anywhere in the cause chain: PostgreSQL's
 * classes 08 (connection exception) and 57P (operator intervention: a shutdown or a start), slonik's
 * pool failures, a refused or reset connection (object storage, the database), gRPC's UNAVAILABLE
 * (Temporal), the object store's 503 and 507 (busy, out of disk). Not the client's fault nor a bug:
 * 503, worth retrying (docs/errors.md).
 */
function isDependencyUnavailable(error: Error): boolean {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (/^08[0-9A-Z]{3}$/.test(code) || /^57P0[1-3]$/.test(code))) return true;
    if (typeof code === 'string' && CONNECTION_FAILURES.has(code)) return true;
    // slonik's classes do not all set `name` (BackendTerminatedUnexpectedlyError's is 'Error').
    if (POOL_FAILURES.has(current.name) || POOL_FAILURES.has(current.constructor.name)) return true;
    // @grpc/grpc-js's status UNAVAILABLE, on the errors Temporal's client rethrows.
    if (code === 14 && 'details' in current) return true;
    // The object store out of disk, busy or starting (MinIO's XMinioStorageFull is a 507).
    const storeStatus = (current as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (storeStatus === 503 || storeStatus === 507) return true;
  }
  return false;
}

/** PostgreSQL class 22, "data exception": bad input that reached the database. */
function isDatabaseDataException(error: Error): boolean {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code)) return true;
  }
  return false;
}

function codeForStatus(status: number): ErrorCode {
  if (status === 404 || status === 405) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status === 403) return 'forbidden';
  if (status === 401) return 'invalid_api_key';
  if (status >= 500) return 'internal_error';
  return 'validation_error';
}

function messageFor(error: Boom.Boom, status: number): string {
  if (status === 404) return 'No such route. See /v1/openapi.json for the API.';
  if (status === 413) return 'The request body is too large.';
  if (status === 415) return 'Send request bodies as application/json.';
  if (status === 400 && /payload|JSON/i.test(error.message)) return 'The request body is not valid JSON.';
  return error.output.payload.message || error.message;
}

/** joi failures become 400 validation_error, with `param` naming the field. */
export function validationFailAction(_request: Request, _h: ResponseToolkit, error?: Error): never {
  const details = (error as ValidationError | undefined)?.details;
  const first = details?.[0];
  const param = first ? first.path.join('.') || first.context?.key || null : null;
  const message = first ? first.message.replaceAll('"', '`') : 'The request is not valid.';
  throw new DomainError('validation_error', message, { param: param === null ? null : String(param) });
}
