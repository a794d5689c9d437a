import { proxyActivities, sleep } from '@temporalio/workflow';
import type { createApiKeyActivities } from '../activities/api-keys.ts';

const { markApiKeyExpired } = proxyActivities<ReturnType<typeof createApiKeyActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export type ExpireApiKeyInput = { apiKeyId: string; expiresAt: string };

/** Sleeps until the key's expiry, then marks it expired and emits `api_key.expired`. */
export async function expireApiKey(input: ExpireApiKeyInput): Promise<string> {
  const wait = Date.parse(input.expiresAt) - Date.now();
  if (wait > 0) await sleep(wait);
  return markApiKeyExpired(input.apiKeyId);
}
