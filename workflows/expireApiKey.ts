import { proxyActivities, sleep } from '@temporalio/workflow';
import type { createApiKeyActivities } from '../activities/api-keys.ts';
import { BOOKKEEPING } from './retry-policies.ts';

const { markApiKeyExpired } = proxyActivities<ReturnType<typeof createApiKeyActivities>>(BOOKKEEPING);

export type ExpireApiKeyInput = { apiKeyId: string; expiresAt: string };

/** `expireApiKey`: one per key. */
export const apiKeyExpiryWorkflowId = (apiKeyId: string) => `api-key-expiry-${apiKeyId}`;

/** Sleeps until the key's expiry, then marks it expired and emits `api_key.expired`. */
export async function expireApiKey(input: ExpireApiKeyInput): Promise<string> {
  const wait = Date.parse(input.expiresAt) - Date.now();
  if (wait > 0) await sleep(wait);
  return markApiKeyExpired(input.apiKeyId);
}
