import { continueAsNew, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { createRetentionActivities } from '../activities/retention.ts';
import { BOOKKEEPING, PURGE_RETRY } from './retry-policies.ts';

type Activities = ReturnType<typeof createRetentionActivities>;

const bookkeeping = proxyActivities<Activities>(BOOKKEEPING);
// One tenant's purge heartbeats between batches: a dead worker is noticed within a minute, and a
// large sandbox may take its time.
const purging = proxyActivities<Activities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '1 minute',
  retry: PURGE_RETRY,
});

/** The spec's sandbox retention (Authentication, "svc_sandbox_"). */
export const SANDBOX_MAX_AGE_HOURS = 24;
/** Workspaces read per page. */
const PAGE = 100;
/** Workspaces purged at once. */
const CONCURRENCY = 4;

export type PurgeSandboxInput = {
  /** The time the purge acts as of (ISO 8601): the workflow's start time unless given. */
  asOf?: string;
  /** Hours a sandbox row is kept; 24 unless given. */
  maxAgeHours?: number;
  /** Where a continued run resumes: the last workspace id purged. */
  after?: string | null;
  /** Rows purged so far, carried across continued runs. */
  purged?: number;
};

export type PurgeSandboxResult = { cutoff: string; workspaces: number; rows: number; objects: number };

/**
 * Purges every workspace's sandbox of everything older than 24 hours, in every family, with its
 * stored objects (docs/sandbox-purge.md). Started every 15 minutes by the `sandbox-purge`
 * schedule; the cutoff comes from the input, or the workflow's own clock, so a run can be told to
 * act as of another time.
 */
export async function purgeSandbox(input: PurgeSandboxInput = {}): Promise<PurgeSandboxResult> {
  const asOf = input.asOf ? Date.parse(input.asOf) : Date.now();
  const cutoff = new Date(asOf - (input.maxAgeHours ?? SANDBOX_MAX_AGE_HOURS) * 3_600_000).toISOString();
  let after = input.after ?? null;
  let workspaces = 0;
  let rows = input.purged ?? 0;
  let objects = 0;
  for (;;) {
    const page = await bookkeeping.listWorkspacesAfter(after, PAGE);
    let next = 0;
    const lane = async () => {
      while (next < page.length) {
        const workspaceId = page[next++] as string;
        const counts = await purging.purgeEnvironment(workspaceId, 'sandbox', cutoff);
        rows += Object.values(counts.rows).reduce((sum, n) => sum + n, 0);
        objects += counts.objects;
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, page.length) }, lane));
    workspaces += page.length;
    if (page.length < PAGE) break;
    after = page[page.length - 1] as string;
    // A long history is replayed on every task: hand over to a fresh run, same cutoff.
    if (workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof purgeSandbox>({
        asOf: new Date(asOf).toISOString(),
        maxAgeHours: input.maxAgeHours,
        after,
        purged: rows,
      });
    }
  }
  return { cutoff, workspaces, rows, objects };
}
