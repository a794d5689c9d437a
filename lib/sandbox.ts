import { type CountedFile, createSandboxQueries, type DailyQuota } from './db/queries/sandbox.ts';
import { DomainError } from './errors.ts';
import type { Tenant } from './tenancy.ts';
import type { Environment } from './vocabulary.ts';

// The spec's sandbox limits (Limits, "Sandbox key": 10 MB a file, 10 files, 25 a day, 5
// downloads), fixed, and what each family that stores files makes of them (docs/transfers.md,
// docs/coffres.md, docs/intakes.md, docs/collections.md, "Sandbox"). Live and test keys have
// their families' own limits instead.

const MiB = 1024 * 1024;
const DAY_MS = 86_400_000;

export const SANDBOX_LIMITS = {
  /** Bytes per file (a transfer's file, a vault item, an intake file's plaintext). */
  maxFileBytes: 10 * MiB,
  /** Files per transfer, items per vault, files per intake submission, transfers per collection. */
  maxFiles: 10,
  /** Transfers, vault items, intake submissions, collections created per rolling 24 hours. */
  perDay: 25,
  /** Downloads of each transfer, vault item or intake file. */
  downloads: 5,
} as const;

export type SandboxLimits = typeof SANDBOX_LIMITS;

/** The sandbox's limits for a tenant of `environment`, or null outside the sandbox. */
export const sandboxLimits = (environment: Environment): SandboxLimits | null =>
  environment === 'sandbox' ? SANDBOX_LIMITS : null;

/**
 * The rolling 24-hour quota of `quota` in a sandbox tenant (nothing elsewhere), counted under a
 * lock held until the creating transaction ends: concurrent creates take turns, so the quota
 * holds however many race. `what` names it in the refusal ("vault items").
 */
export async function checkDailyQuota(
  tx: Parameters<typeof createSandboxQueries>[0],
  tenant: Tenant,
  quota: DailyQuota,
  what: string,
): Promise<void> {
  if (tenant.environment !== 'sandbox') return;
  const queries = createSandboxQueries(tx);
  await queries.lockQuota(tenant, quota);
  const recent = await queries.countCreatedSince(tenant, quota, new Date(Date.now() - DAY_MS));
  if (recent >= SANDBOX_LIMITS.perDay) {
    throw new DomainError(
      'rate_limited',
      `Sandbox workspaces may create ${SANDBOX_LIMITS.perDay} ${what} per 24 hours.`,
      {
        retryAfterSeconds: 3600,
      },
    );
  }
}

/** A file over the sandbox's size, named by `param`. */
export function checkFileSize(environment: Environment, size: number, param: string): void {
  const limits = sandboxLimits(environment);
  if (limits && size > limits.maxFileBytes) {
    throw new DomainError('validation_error', `A sandbox file is at most ${limits.maxFileBytes} bytes.`, { param });
  }
}

/**
 * Counts a download of each file of `ids` in a sandbox tenant and answers those still under the
 * cap (every one elsewhere, uncounted): the caller leaves the others out, or refuses with
 * downloadLimitReached when it asked for one file.
 */
export async function countSandboxDownloads(
  db: Parameters<typeof createSandboxQueries>[0],
  environment: Environment,
  kind: CountedFile,
  ids: readonly string[],
): Promise<ReadonlySet<string>> {
  if (environment !== 'sandbox') return new Set(ids);
  return createSandboxQueries(db).countDownloads(kind, ids, SANDBOX_LIMITS.downloads);
}

/** As a transfer past its max_downloads: 403 with `reason: limit_reached`. */
export const downloadLimitReached = (what: string) =>
  new DomainError('forbidden', `${what} has reached the sandbox's limit of ${SANDBOX_LIMITS.downloads} downloads.`, {
    details: { reason: 'limit_reached' },
  });
