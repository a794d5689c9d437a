// The durable timers of a key's life. The API schedules them inside the
// transaction that creates or rotates a key: if scheduling fails, nothing is
// committed; if the commit fails, the timer wakes to find nothing to do.
export type KeyLifecycle = {
  scheduleExpiry(apiKeyId: string, expiresAt: Date): Promise<void>;
  scheduleGraceEnd(secretId: string, validUntil: Date): Promise<void>;
};
