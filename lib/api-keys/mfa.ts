import { unseal } from '../crypto/secrets.ts';
import { matchTotpStep } from '../crypto/totp.ts';
import { createWorkspaceQueries } from '../db/queries/workspaces.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { Caller } from '../tenancy.ts';

// Verification codes (docs/api-keys.md, "MFA"). Each attempt takes its place in
// the count of wrong codes (per user and environment) before its code is
// checked, in one atomic statement: past MFA_FAILURES_PER_15_MIN (5) in a
// quarter hour every code, even a right one, is refused until the quarter hour
// is over, however many guesses arrive at once. A right code clears the count.
// Each time step is accepted once per user (RFC 6238 section 5.2): a code, once
// used, is refused, and so is any earlier one.
//
// Everything runs on the pool, not on the caller's transaction: a failure must
// outlive the rollback its error causes, and a spent code stays spent.

export const MFA_FAILURE_WINDOW_MS = 15 * 60_000;

/** Why a code is needed: the sensitive scopes involved (may be empty) and the reason, for the message. */
export type MfaNeed = { sensitiveScopes: readonly string[]; reason: string };

/**
 * Checks the caller's code, or throws `mfa_required` (missing, wrong or already used code) or `rate_limited`
 * (too many wrong codes, with when to try again).
 */
export async function verifyMfaCode(
  services: Services,
  caller: Caller,
  code: string | undefined,
  need: MfaNeed,
): Promise<void> {
  const users = createWorkspaceQueries(services.db);
  const max = services.config.apiKeys.mfaFailuresPer15Min;
  const locked = async () => {
    const remainingMs = await users.mfaLockRemainingMs(caller.userId, caller.environment, max, MFA_FAILURE_WINDOW_MS);
    return new DomainError('rate_limited', 'Too many wrong verification codes. Wait before trying another.', {
      param: 'mfa_code',
      retryAfterSeconds: Math.max(1, Math.ceil(remainingMs / 1000)),
    });
  };
  // A missing code is not a guess: not counted, but still told about a lock.
  if (!code) {
    const remainingMs = await users.mfaLockRemainingMs(caller.userId, caller.environment, max, MFA_FAILURE_WINDOW_MS);
    if (remainingMs > 0) throw await locked();
    throw mfaRequired('A verification code is required', need);
  }
  if (!(await users.takeMfaAttempt(caller.userId, caller.environment, max, MFA_FAILURE_WINDOW_MS))) {
    throw await locked();
  }
  const user = await users.mfaSecret(caller.workspaceId, caller.userId);
  const secret = user?.mfa_secret_sealed ? unseal(services.keys.seal, user.mfa_secret_sealed) : null;
  const step = secret ? matchTotpStep(secret, code, Date.now()) : null;
  if (step === null) throw mfaRequired('The verification code is not valid', need);
  // A replayed code stays counted: it is not a right code.
  if (!(await users.acceptMfaStep(caller.userId, step))) {
    throw mfaRequired('This verification code has already been used; wait for the next one', need);
  }
  await users.clearMfaFailures(caller.userId, caller.environment);
}

export function mfaRequired(problem: string, need: MfaNeed) {
  return new DomainError(
    'mfa_required',
    `${problem} ${need.reason}. Resend the request with a current code in mfa_code.`,
    {
      param: 'mfa_code',
      details: { sensitive_scopes: need.sensitiveScopes },
    },
  );
}
