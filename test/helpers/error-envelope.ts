import type { ApiResponse } from './api.ts';

// What an error answer must be, as the spec's table says: shared by the fuzzers
// (test/fuzz.test.ts, test/fuzz-openapi.test.ts).

/** The spec's error table: code -> HTTP statuses. validation_error is 400 (422 for an approval that is not required). */
export const SPEC_ERRORS: Record<string, readonly number[]> = {
  missing_api_key: [401],
  invalid_api_key: [401],
  revoked_api_key: [401],
  expired_api_key: [401],
  mfa_required: [401],
  scope_missing: [403],
  ip_not_allowed: [403],
  forbidden: [403],
  // Beyond 400 and 422, validation_error also carries 408 (a stalled body), 409 (upload conflicts),
  // 412 (a tus version we do not speak), 413 (body too large), 415 (not JSON), 416 (range outside a
  // file), 431 (headers too large) and 460 (a tus checksum mismatch); not_found carries 410 (gone).
  validation_error: [400, 408, 409, 412, 413, 415, 416, 422, 431, 460],
  not_found: [404, 410],
  idempotency_conflict: [409],
  rate_limited: [429],
  internal_error: [500],
  service_unavailable: [503],
};

/** What is wrong with an error answer in the spec's envelope, or null when it is one. */
export function envelopeProblem(response: ApiResponse): string | null {
  const { status, body } = response;
  const requestId = response.headers.get('x-request-id');
  if (!(response.headers.get('content-type') ?? '').startsWith('application/json')) {
    return `error with content-type ${response.headers.get('content-type')}`;
  }
  const error = body?.error;
  if (!error || typeof error !== 'object') return 'error body is not {error: {...}}';
  for (const field of ['code', 'message', 'param', 'doc_url', 'request_id']) {
    if (!(field in error)) return `error.${field} missing`;
  }
  if (typeof error.code !== 'string' || !(error.code in SPEC_ERRORS)) return `error.code ${JSON.stringify(error.code)}`;
  if (!SPEC_ERRORS[error.code]?.includes(status)) return `error.code ${error.code} with status ${status}`;
  if (typeof error.message !== 'string' || error.message === '') return 'error.message is not a non-empty string';
  if (error.param !== null && typeof error.param !== 'string') return 'error.param is neither string nor null';
  if (error.doc_url !== null && typeof error.doc_url !== 'string') return 'error.doc_url is neither string nor null';
  if (error.request_id !== requestId) return `error.request_id ${error.request_id} != X-Request-Id ${requestId}`;
  if (status === 429 && !/^\d+$/.test(response.headers.get('retry-after') ?? '')) return '429 without Retry-After';
  return null;
}

/** What is wrong with an error answer of a SCIM protocol route (RFC 7644 §3.12), or null. */
export function scimErrorProblem(response: ApiResponse): string | null {
  const { status, body } = response;
  if (!(response.headers.get('content-type') ?? '').startsWith('application/scim+json')) {
    return `SCIM error with content-type ${response.headers.get('content-type')}`;
  }
  if (!Array.isArray(body?.schemas) || body.schemas[0] !== 'urn:ietf:params:scim:api:messages:2.0:Error') {
    return 'SCIM error body without the Error schema';
  }
  if (body.status !== String(status)) return `SCIM error status ${JSON.stringify(body.status)} with status ${status}`;
  if (typeof body.detail !== 'string' || body.detail === '') return 'SCIM error without detail';
  if (status === 400 && typeof body.scimType !== 'string') return 'SCIM 400 without scimType';
  if (status === 429 && !/^\d+$/.test(response.headers.get('retry-after') ?? '')) return '429 without Retry-After';
  return null;
}
