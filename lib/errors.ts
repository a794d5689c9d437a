import Boom from '@hapi/boom';

// The spec's error codes and their HTTP statuses. Everything that fails a
// request throws one of these; api/errors.ts renders the envelope once.
export const ERROR_STATUS = {
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
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export type ApiErrorData = {
  code: ErrorCode;
  param: string | null;
  /** Extra members placed inside `error`, e.g. the sensitive scopes for mfa_required. */
  details?: Record<string, unknown>;
  headers?: Record<string, string>;
};

export type ApiErrorOptions = {
  param?: string | null;
  status?: number;
  details?: Record<string, unknown>;
  headers?: Record<string, string>;
};

export function apiError(code: ErrorCode, message: string, options: ApiErrorOptions = {}): Boom.Boom<ApiErrorData> {
  const data: ApiErrorData = { code, param: options.param ?? null };
  if (options.details) data.details = options.details;
  if (options.headers) data.headers = options.headers;
  return new Boom.Boom<ApiErrorData>(message, { statusCode: options.status ?? ERROR_STATUS[code], data });
}

export const notFound = (what: string) => apiError('not_found', `No such ${what}.`);
