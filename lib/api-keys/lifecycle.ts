import type { Tenant } from '../tenancy.ts';

// The durable timers of a key's life. The API schedules them inside the
// transaction that creates or rotates a key: if scheduling fails, nothing is
// committed; if the commit fails, the timer wakes to find nothing to do. The tenant labels the
// workflow for operators (lib/temporal-search-attributes.ts).
export type KeyLifecycle = {
  scheduleExpiry(tenant: Tenant, apiKeyId: string, expiresAt: Date): Promise<void>;
  scheduleGraceEnd(tenant: Tenant, secretId: string, validUntil: Date): Promise<void>;
};

// services.workflows.apiKeys (lib/services.ts), built by lib/api-keys/temporal.ts.
declare module '../services.ts' {
  interface FamilyWorkflows {
    /** The durable timers of API keys. */
    apiKeys: KeyLifecycle;
  }
}
