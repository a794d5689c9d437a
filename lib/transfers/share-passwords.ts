import { verifyPassword } from '../crypto/password.ts';
import { signToken, verifyToken } from '../crypto/signed-token.ts';
import { createEventQueries } from '../db/queries/events.ts';
import { createShareQueries, WHOLE_LINK } from '../db/queries/shares.ts';
import type { TransferRow } from '../db/queries/transfers.ts';
import { DomainError } from '../errors.ts';
import { transferEventView } from '../events/views.ts';
import { addressBucket } from '../net/address-bucket.ts';
import type { Services } from '../services.ts';

// Share passwords: the rule a new one must follow, and the check of a guess,
// counted per link and client address before it is verified
// (docs/transfers.md, "Passwords").

/** Who asks, as the share routes see them. */
export type Requester = { ip: string; userAgent: string | null };

/**
 * The rule for share passwords, checked when a transfer is created (docs/transfers.md, "Passwords"): a length
 * floor, as NIST SP 800-63B asks of memorised secrets, and no composition rule, since the attempt limits below
 * are what stand between a guesser and the link. Only the two patterns any guesser tries first are refused.
 */
export const SHARE_PASSWORD_RULE = { minLength: 8, maxLength: 256 } as const;

/** What is wrong with a share password, or null when it follows SHARE_PASSWORD_RULE. Counts Unicode characters. */
export function sharePasswordProblem(password: string): string | null {
  const characters = [...password.normalize('NFC')];
  if (characters.length < SHARE_PASSWORD_RULE.minLength) {
    return `must be at least ${SHARE_PASSWORD_RULE.minLength} characters long`;
  }
  if (new Set(characters).size === 1) return 'must not repeat a single character';
  if (isRun(characters)) return 'must not be a run of consecutive characters (like 12345678 or abcdefgh)';
  return null;
}

/** Whether each character follows the previous one by the same step of one code point, up or down. */
function isRun(characters: readonly string[]): boolean {
  const points = characters.map((c) => c.codePointAt(0) ?? 0);
  const step = (points[1] ?? 0) - (points[0] ?? 0);
  return (step === 1 || step === -1) && points.every((p, i) => i === 0 || p - (points[i - 1] ?? 0) === step);
}

const ATTEMPT_WINDOW_MS = 15 * 60_000;

class LinkCeilingReached extends Error {}

/**
 * Checks a share password. Each attempt is counted before the password is
 * verified, in one transaction that increments (or refuses) the counter of
 * the client's address and then that of the whole link, so parallel guesses
 * cannot outrun the limits. A correct password gives its attempt back.
 *
 * - an address has PASSWORD_ATTEMPTS_PER_15_MIN attempts per link and window;
 * - past PASSWORD_LINK_ATTEMPTS_PER_15_MIN on the link, only an address's first
 *   attempt of the window is heard: a distributed guesser gets one guess per
 *   address, and a recipient who has not failed is never refused.
 */
export async function checkPassword(
  services: Services,
  transfer: TransferRow,
  password: string | undefined,
  requester: Requester,
): Promise<void> {
  const hash = transfer.password_hash;
  if (!hash) return;
  const { passwordAttemptsPer15Min, passwordLinkAttemptsPer15Min } = services.config.transfers;
  const now = Date.now();
  const windowStart = new Date(now - (now % ATTEMPT_WINDOW_MS));
  const window = { transferId: transfer.id, clientKey: addressBucket(requester.ip), windowStart };
  let heard: 'yes' | 'address' | 'link';
  try {
    heard = await services.db.transaction(async (tx) => {
      const shares = createShareQueries(tx);
      const own = await shares.countAttempt(window, passwordAttemptsPer15Min);
      if (own === null) return 'address' as const;
      const all = await shares.countAttempt(
        { ...window, clientKey: WHOLE_LINK },
        passwordLinkAttemptsPer15Min,
        own === 1,
      );
      // Rolls the address's increment back: a refused attempt is not an attempt.
      if (all === null) throw new LinkCeilingReached();
      return 'yes' as const;
    });
  } catch (error) {
    if (!(error instanceof LinkCeilingReached)) throw error;
    heard = 'link';
  }
  const shares = createShareQueries(services.db);
  await shares.forgetOldWindows(transfer.id, windowStart);
  if (heard !== 'yes') {
    const retryAfter = Math.max(1, Math.ceil((windowStart.getTime() + ATTEMPT_WINDOW_MS - Date.now()) / 1000));
    throw new DomainError(
      'rate_limited',
      heard === 'address'
        ? 'Too many wrong passwords from your address for this link. Try again later.'
        : 'Too many wrong passwords for this link. Try again later.',
      { retryAfterSeconds: retryAfter, details: { reason: 'password_attempts' } },
    );
  }
  if (password && (await verifyPassword(password, hash))) {
    await shares.giveBackAttempt(window);
    return;
  }
  const tenant = { workspaceId: transfer.workspace_id, environment: transfer.environment };
  await createEventQueries(services.db).record(tenant, 'transfer.password_failed', {
    transfer: transferEventView(transfer),
    ip_address: requester.ip,
  });
  throw new DomainError('forbidden', password ? 'The password is not correct.' : 'This transfer needs its password.', {
    param: 'password',
    details: { reason: 'password_required' },
  });
}

const UNLOCK_SECONDS = 15 * 60;

/** For the share page without JavaScript: proof that this browser gave the password, for 15 minutes. */
export function unlockToken(services: Services, transfer: { id: string }): string {
  return signToken(services.keys.links, 'unlock', { t: transfer.id }, new Date(Date.now() + UNLOCK_SECONDS * 1000));
}

/** Whether `token` (from unlockWithProof) proves the password of this transfer. */
export function unlockedBy(services: Services, transfer: TransferRow, token: string | undefined): boolean {
  if (!token) return false;
  const check = verifyToken(services.keys.links, 'unlock', token);
  return check.ok && check.data.t === transfer.id;
}
