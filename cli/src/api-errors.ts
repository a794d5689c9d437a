import { ConnectionError, ValiseError } from '../../sdk/src/index.ts';
import { EXIT_API, EXIT_EXISTS, EXIT_NETWORK, EXIT_USAGE } from './exit-codes.ts';

// Turns an SDK error into what a person needs: the API's message and code, and
// what to do about it, one hint per error code of the spec.

export function exitCodeFor(error: ValiseError): number {
  if (error instanceof ConnectionError) return EXIT_NETWORK;
  if (error.code === 'file_exists') return EXIT_EXISTS;
  if (error.status > 0) return EXIT_API;
  // An SDK-side failure without an answer (an e2e link without its key, a damaged blob).
  return error.code === 'integrity_error' ? EXIT_API : EXIT_USAGE;
}

/** The lines printed for an API error: `error: <message> (<code>)`, then hints. */
export function describeApiError(error: ValiseError, baseUrl: string): string[] {
  const lines = [`error: ${error.message} (${error.code})`];
  const hint = hintFor(error, baseUrl);
  if (hint) lines.push(hint);
  if (error.requestId) lines.push(`request id: ${error.requestId}`);
  return lines;
}

function hintFor(error: ValiseError, baseUrl: string): string | undefined {
  const body = error.body;
  switch (error.code) {
    case 'missing_api_key':
      return 'No API key was sent. Run `valise login`, or set VALISE_API_KEY.';
    case 'invalid_api_key':
      return 'The API key is unknown, malformed or of another environment. Run `valise login` with a valid key.';
    case 'revoked_api_key':
      return 'This API key was revoked or deactivated. Log in with another key (`valise login`).';
    case 'expired_api_key':
      return 'This API key has expired. Log in with a current key (`valise login`).';
    case 'mfa_required': {
      const scopes = Array.isArray(body.sensitive_scopes)
        ? ` (sensitive scopes: ${body.sensitive_scopes.join(', ')})`
        : '';
      return `This needs a verification code from your authenticator app${scopes}. Run it again with --mfa-code CODE.`;
    }
    case 'scope_missing':
      return typeof body.required_scope === 'string'
        ? `This API key lacks the scope \`${body.required_scope}\`. Use a key that has it.`
        : 'This API key lacks a scope this command needs.';
    case 'ip_not_allowed':
      return "This machine's IP address is not in the key's allowed_ips.";
    case 'forbidden':
      return forbiddenHint(body.reason);
    case 'validation_error':
      return error.param ? `Check the value of \`${error.param}\`.` : undefined;
    case 'not_found':
      return typeof body.reason === 'string'
        ? `The transfer cannot be downloaded: ${body.reason.replaceAll('_', ' ')}.`
        : 'Nothing with that id is visible to this key (check the id and the key’s environment).';
    case 'idempotency_conflict':
      return 'The same Idempotency-Key was used with a different request; do not retry it unchanged.';
    case 'rate_limited':
      return error.retryAfterSeconds !== undefined
        ? `Try again in ${error.retryAfterSeconds} s.`
        : 'A limit was reached (the key’s max_uses may be exhausted).';
    case 'internal_error':
      return 'The service failed. Try again later; quote the request id if it persists.';
    case 'service_unavailable':
      return `A component of the service is down for now. Try again in ${error.retryAfterSeconds ?? 2} s.`;
    case 'connection_error':
    case 'timeout':
      return `Could not reach the API at ${baseUrl}. Is it running? (set VALISE_BASE_URL or use \`valise login --base-url\`)`;
    case 'integrity_error':
      return 'The content does not decrypt: the link or its #k= key is damaged or wrong.';
    case 'file_exists':
      return 'Nothing was replaced. Run it again with --force to replace it, or choose another folder with -o.';
    default:
      return undefined;
  }
}

function forbiddenHint(reason: unknown): string | undefined {
  switch (reason) {
    case 'uploading':
    case 'scanning':
      return 'The transfer is not ready yet (its files are being uploaded or scanned). Use --wait, or try again shortly.';
    case 'awaiting_approval':
      return 'The transfer is waiting for approval (`valise approve ID`).';
    case 'rejected':
      return 'The transfer was rejected.';
    case 'limit_reached':
      return 'The transfer reached its download limit.';
    case 'password_required':
      return 'The transfer needs its password: --password PASSWORD, or --password - to read it from stdin.';
    case 'link_expired':
      return 'The download link expired; run the command again.';
    case 'geo_blocked':
      return 'The sender allows downloads of this transfer only from some countries, and your address is not in one of them.';
    default:
      return undefined;
  }
}

export function isApiError(error: unknown): error is ValiseError {
  return error instanceof ValiseError;
}
