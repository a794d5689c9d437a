import { proxyActivities, sleep } from '@temporalio/workflow';
import type { createApiKeyActivities } from '../activities/api-keys.ts';

const { retireRotatedKeyValue } = proxyActivities<ReturnType<typeof createApiKeyActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export type EndKeyRotationGraceInput = { secretId: string; validUntil: string };

/** Sleeps through a rotated key value's grace period, then retires that value for good. */
export async function endKeyRotationGrace(input: EndKeyRotationGraceInput): Promise<string> {
  const wait = Date.parse(input.validUntil) - Date.now();
  if (wait > 0) await sleep(wait);
  return retireRotatedKeyValue(input.secretId);
}
