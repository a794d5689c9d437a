import { proxyActivities, sleep } from '@temporalio/workflow';
import type { createApiKeyActivities } from '../activities/api-keys.ts';
import { BOOKKEEPING } from './retry-policies.ts';

const { retireRotatedKeyValue } = proxyActivities<ReturnType<typeof createApiKeyActivities>>(BOOKKEEPING);

export type EndKeyRotationGraceInput = { secretId: string; validUntil: string };

/** `endKeyRotationGrace`: one per rotated key value. */
export const rotationGraceWorkflowId = (secretId: string) => `api-key-rotation-grace-${secretId}`;

/** Sleeps through a rotated key value's grace period, then retires that value for good. */
export async function endKeyRotationGrace(input: EndKeyRotationGraceInput): Promise<string> {
  const wait = Date.parse(input.validUntil) - Date.now();
  if (wait > 0) await sleep(wait);
  return retireRotatedKeyValue(input.secretId);
}
