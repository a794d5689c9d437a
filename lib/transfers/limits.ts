import type { Config } from '../config.ts';
import { SANDBOX_LIMITS } from '../sandbox.ts';
import type { Environment } from '../vocabulary.ts';

export type TransferLimits = {
  maxFileBytes: number;
  maxFiles: number;
  maxExpiryHours: number;
  defaultExpiryHours: number;
  /** Cap on max_downloads, and its default when the client sends none; null for no cap. */
  maxDownloads: number | null;
  /** Transfers a workspace may create per rolling 24 hours; null for no quota. */
  transfersPerDay: number | null;
};

/** Sandbox limits are the spec's and fixed (lib/sandbox.ts); live and test limits are configuration. */
export function limitsFor(environment: Environment, config: Config): TransferLimits {
  if (environment === 'sandbox') {
    return {
      maxFileBytes: SANDBOX_LIMITS.maxFileBytes,
      maxFiles: SANDBOX_LIMITS.maxFiles,
      maxExpiryHours: 24,
      defaultExpiryHours: 24,
      maxDownloads: SANDBOX_LIMITS.downloads,
      transfersPerDay: SANDBOX_LIMITS.perDay,
    };
  }
  return {
    maxFileBytes: config.transfers.maxFileBytes,
    maxFiles: config.transfers.maxFiles,
    maxExpiryHours: config.transfers.maxExpiryHours,
    defaultExpiryHours: config.transfers.defaultExpiryHours,
    maxDownloads: null,
    transfersPerDay: null,
  };
}
