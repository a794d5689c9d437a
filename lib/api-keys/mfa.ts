import type { CommonQueryMethods } from 'slonik';
import { unseal } from '../crypto/secrets.ts';
import { verifyTotp } from '../crypto/totp.ts';
import { createWorkspaceQueries, type MfaStateRow } from '../db/queries/workspaces.ts';
import { apiError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { Caller } from './present.ts';

// Verification codes for sensitive grants (docs/api-keys.md, "MFA"). Wrong codes
// are counted per user: past MFA_FAILURES_PER_15_MIN (5) in a quarter hour every
// code, even a right one, is refused until the quarter hour is over, so a stolen
// key cannot guess its way to the sensitive scopes.

export const MFA_FAILURE_WINDOW_MS = 15 * 60_000;

/**
 * Checks the caller's code, or throws `mfa_required` (missing or wrong code) or `rate_limited` (too
 * many wrong codes, with Retry-After).
 */
export async function verifyMfaCode(
  services: Services,
  db: CommonQueryMethods,
  caller: Caller,
  code: string | undefined,
  sensitiveScopes: readonly string[],
): Promise<void> {
  const now = Date.now();
  const users = createWorkspaceQueries(db);
  const state = await users.mfaState(caller.workspaceId, caller.userId);
  const lockedForMs = state ? lockRemainingMs(state, services.config.apiKeys.mfaFailuresPer15Min, now) : 0;
  if (lockedForMs > 0) {
    throw apiError('rate_limited', 'Too many wrong verification codes. Wait before trying another.', {
      param: 'mfa_code',
      headers: { 'Retry-After': String(Math.ceil(lockedForMs / 1000)) },
    });
  }
  const secret = state?.mfa_secret_sealed ? unseal(services.keys.seal, state.mfa_secret_sealed) : null;
  if (state && code && secret && verifyTotp(secret, code, now)) {
    if (state.mfa_failures > 0) await users.clearMfaFailures(state.id);
    return;
  }
  // On the pool, not `db`: the failure must outlive the transaction this error rolls back.
  if (state && code) {
    await createWorkspaceQueries(services.db).recordMfaFailure(state.id, new Date(now - MFA_FAILURE_WINDOW_MS));
  }
  throw apiError(
    'mfa_required',
    `${code ? 'The verification code is not valid' : 'A verification code is required'} to grant sensitive scopes: ${sensitiveScopes.join(', ')}. Resend the request with a current code in mfa_code.`,
    { param: 'mfa_code', details: { sensitive_scopes: sensitiveScopes } },
  );
}

function lockRemainingMs(state: MfaStateRow, maxFailures: number, now: number): number {
  if (state.mfa_failures < maxFailures || !state.mfa_failures_since) return 0;
  return Math.max(0, state.mfa_failures_since.getTime() + MFA_FAILURE_WINDOW_MS - now);
}
