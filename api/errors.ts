import type Boom from '@hapi/boom';
import type { Request, ResponseToolkit } from '@hapi/hapi';
import type { ValidationError } from 'joi';
import { type ApiErrorData, apiError, ERROR_STATUS, type ErrorCode } from '../lib/errors.ts';

// The one place an error becomes the spec's envelope. Handlers throw Boom
// (usually via apiError); anything else is turned into a safe 4xx or a
// generic 500 here, never leaking internals.

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

export function renderError(error: Boom.Boom, requestId: string, docsBaseUrl: string) {
  if (isDatabaseDataException(error)) {
    // Schemas should stop such input first; if one slips through, it is still the client's input.
    return renderError(
      apiError('validation_error', 'A value in the request is out of range or cannot be stored.'),
      requestId,
      docsBaseUrl,
    );
  }
  // Only errors made by apiError carry our data; hapi's own (payload parsing,
  // decompression) may carry arbitrary objects that must not leak through.
  const data = isApiErrorData(error.data) ? error.data : null;
  const status = error.output.statusCode;
  const code = data?.code ?? codeForStatus(status);
  const message =
    status >= 500
      ? 'Something went wrong on our side. Quote the request id if you contact support.'
      : data
        ? error.message
        : messageFor(error, status);
  const body: ErrorEnvelope = {
    error: {
      code,
      message,
      param: data?.param ?? null,
      doc_url: `${docsBaseUrl}/errors#${code}`,
      request_id: requestId,
      ...(data?.details ?? {}),
    },
  };
  return { status, body, headers: data?.headers ?? {} };
}

/** PostgreSQL class 22, "data exception": bad input that reached the database. */
function isDatabaseDataException(error: Error): boolean {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code)) return true;
  }
  return false;
}

function isApiErrorData(data: unknown): data is ApiErrorData {
  return (
    typeof data === 'object' &&
    data !== null &&
    Object.hasOwn(ERROR_STATUS, (data as { code?: unknown }).code as string)
  );
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
  throw apiError('validation_error', message, { param: param === null ? null : String(param) });
}
