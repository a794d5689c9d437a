import {
  ActivityFailure,
  defineQuery,
  proxyActivities,
  type RetryPolicy,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import type { createGdprActivities } from '../activities/gdpr.ts';
import { BOOKKEEPING, FIRST_LOOK_RETRY } from './retry-policies.ts';
import { msUntil } from './waiting.ts';

type Activities = ReturnType<typeof createGdprActivities>;

/**
 * A GDPR export's collection and sealing: a database or object store down for a while is waited
 * for, eight tries (about four minutes); past that the export is `failed` and can be asked again.
 */
const EXPORT_RETRY: RetryPolicy = {
  initialInterval: '2 seconds',
  backoffCoefficient: 2,
  maximumInterval: '1 minute',
  maximumAttempts: 8,
};

const firstLook = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: FIRST_LOOK_RETRY });
const work = proxyActivities<Activities>({ startToCloseTimeout: '5 minutes', retry: EXPORT_RETRY });
const storage = proxyActivities<Activities>(BOOKKEEPING);

export type GdprExportProgress = { family: string | null; done: number; total: number; phase: string };

/** What the export is doing now, for the Temporal UI and tools: the family being collected. */
export const gdprExportProgressQuery = defineQuery<GdprExportProgress>('progress');

/** `gdprExport`: one per export. */
export const gdprExportWorkflowId = (exportId: string) => `gdpr-export-${exportId}`;

/**
 * Collects a GDPR export (workflow id `gdpr-export-<id>`): one activity per family (each named by
 * its family in the UI's history, and the `progress` query), then one sealed document; it stays
 * downloadable until its retention ends, when its key and object are deleted.
 */
export async function gdprExport(input: { exportId: string }): Promise<string> {
  const { exportId } = input;
  const progress: GdprExportProgress = { family: null, done: 0, total: 0, phase: 'starting' };
  setHandler(gdprExportProgressQuery, () => progress);
  const plan = await firstLook.beginGdprExport(exportId);
  if (!plan) return 'ended';
  progress.total = plan.families.length;
  progress.phase = 'collecting';
  try {
    for (const [index, family] of plan.families.entries()) {
      progress.family = family;
      await work.collectGdprExportFamily(exportId, family, index);
      progress.done = index + 1;
    }
    progress.family = null;
    progress.phase = 'sealing';
    await work.sealGdprExport(exportId, plan.families);
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    progress.phase = 'failed';
    await storage.failGdprExport(exportId, error.cause?.message ?? error.message);
    return 'failed';
  }
  const retentionUntil = await storage.gdprExportRetention(exportId);
  progress.phase = 'completed';
  if (retentionUntil) await sleep(msUntil(Date.parse(retentionUntil)));
  progress.phase = 'expired';
  await storage.expireGdprExport(exportId);
  return 'expired';
}
