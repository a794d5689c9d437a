import type { Redis } from 'ioredis';
import type { RateState } from './types.ts';

export const RATE_WINDOW_SECONDS = 60;

// Fixed 60-second windows counted in Redis, so every API process shares one
// budget per workspace, environment and endpoint class. INCR and the first
// EXPIRE run as one script: a crash between them cannot leave an immortal key.
const INCREMENT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return count`;

export type RateDecision = RateState & { allowed: boolean; retryAfterSeconds: number };

export class RateLimiter {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.redis = redis;
    this.prefix = prefix;
  }

  async take(bucket: string, limit: number, nowMs = Date.now()): Promise<RateDecision> {
    const window = Math.floor(nowMs / 1000 / RATE_WINDOW_SECONDS);
    const resetSeconds = (window + 1) * RATE_WINDOW_SECONDS;
    const key = `${this.prefix}rl:${bucket}:${window}`;
    const count = Number(await this.redis.eval(INCREMENT, 1, key, String(RATE_WINDOW_SECONDS + 5)));
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetSeconds,
      windowSeconds: RATE_WINDOW_SECONDS,
      retryAfterSeconds: Math.max(1, resetSeconds - Math.floor(nowMs / 1000)),
    };
  }
}
