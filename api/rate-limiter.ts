import type { Redis } from 'ioredis';
import { withTimeout } from '../lib/with-timeout.ts';

export const RATE_WINDOW_SECONDS = 60;

// Fixed 60-second windows counted in Redis, so every API process shares one
// budget per workspace, environment and endpoint class. INCRBY and the first
// EXPIRE run as one script: a crash between them cannot leave an immortal key.
// The script is a defined command: ioredis sends its SHA (EVALSHA) and the text
// only when Redis lacks it, not the text with every request.
//
// The requests that reach the limiter in one turn of the event loop are counted
// together, at the end of that turn: one increment by their number per bucket,
// all buckets in one write, each request taking its own count within the total.
// Counts stay exact; a write to Redis was most of what a cheap request cost
// beyond hapi's own work (bench/README.md, `GET /v1/me`).
const INCREMENT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return count`;
const INCREMENT_COMMAND = 'valiseRateIncrement';
type Increment = (key: string, ttlSeconds: string, by: string) => unknown;
type WithIncrement = Redis & { [INCREMENT_COMMAND]: Increment };
/** The requests of one turn waiting for their bucket's count: each resolves with its own, or null if Redis failed. */
type Waiting = Array<(count: number | null) => void>;

/** How long one Redis call may take before this request counts in process instead. */
const REDIS_TIMEOUT_MS = 500;
/** While Redis stays away, the warning is repeated this often. */
const WARN_EVERY_MS = 60_000;
/** Bound on the in-process fallback's buckets (one per workspace class or address per window). */
const MEMORY_BUCKETS = 200_000;

/** A budget as the X-RateLimit-* headers report it. */
export type RateState = { limit: number; remaining: number; resetSeconds: number; windowSeconds: number };
export type RateDecision = RateState & { allowed: boolean; retryAfterSeconds: number };
/** A budget and the limit it is held to. */
export type Budget = { bucket: string; limit: number };

/** `degraded`: Redis is unreachable and each API process counts on its own, with the same budgets. */
export type LimiterStatus = { status: 'ok' | 'degraded'; store: 'redis' | 'memory' };

/**
 * Without Redis the limiter does not open: it falls back to counting in this
 * process (the same budgets, per process instead of shared), says so loudly
 * in the log and reports `degraded` through status(), and goes back to Redis
 * as soon as a call succeeds there.
 */
export class RateLimiter {
  private readonly redis: WithIncrement;
  private readonly prefix: string;
  private readonly warn: (message: string) => void;
  private readonly memory = new Map<string, number>();
  private memoryWindow = -1;
  private degradedSince: number | null = null;
  private lastWarning = 0;
  /** Increments asked for in this turn of the event loop, by key, sent together at its end. */
  private waiting = new Map<string, Waiting>();

  constructor(
    redis: Redis,
    prefix: string,
    warn: (message: string) => void = (message) => process.stderr.write(`api: ${message}\n`),
  ) {
    redis.defineCommand(INCREMENT_COMMAND, { numberOfKeys: 1, lua: INCREMENT });
    this.redis = redis as WithIncrement;
    this.prefix = prefix;
    this.warn = warn;
    // A listener also keeps ioredis from printing each reconnection failure as an unhandled error.
    redis.on('error', (error: Error) => this.degrade(error.message));
  }

  /** Counts one request against the bucket's budget for the current window. */
  async take(bucket: string, limit: number, nowMs = Date.now()): Promise<RateDecision> {
    const count = await this.count(bucket, nowMs, 'increment');
    return decision(count, count <= limit, limit, nowMs);
  }

  /** Reads the bucket without counting: allowed while fewer than `limit` were counted this window. */
  async peek(bucket: string, limit: number, nowMs = Date.now()): Promise<RateDecision> {
    const count = await this.count(bucket, nowMs, 'read');
    return decision(count, count < limit, limit, nowMs);
  }

  status(): LimiterStatus {
    return this.degradedSince === null ? { status: 'ok', store: 'redis' } : { status: 'degraded', store: 'memory' };
  }

  private async count(bucket: string, nowMs: number, mode: 'increment' | 'read'): Promise<number> {
    const window = Math.floor(nowMs / 1000 / RATE_WINDOW_SECONDS);
    const key = `${this.prefix}rl:${bucket}:${window}`;
    if (this.redis.status === 'ready') {
      if (mode === 'increment') {
        const count = await this.incrementThisTurn(key);
        if (count !== null) return count;
      } else {
        try {
          const reply = await withTimeout(this.redis.get(key), REDIS_TIMEOUT_MS);
          this.recover();
          return Number(reply ?? 0);
        } catch (error) {
          this.degrade((error as Error).message);
        }
      }
    } else {
      this.degrade(`the connection is ${this.redis.status}`);
    }
    return this.countInMemory(key, window, mode);
  }

  /** `key`'s count for this request, once this turn's increments are sent; null if Redis failed. */
  private incrementThisTurn(key: string): Promise<number | null> {
    if (this.waiting.size === 0) setImmediate(() => this.sendIncrements());
    let waiting = this.waiting.get(key);
    if (!waiting) {
      waiting = [];
      this.waiting.set(key, waiting);
    }
    const queue = waiting;
    return new Promise((resolve) => queue.push(resolve));
  }

  /**
   * Sends this turn's increments in one write. The timeout counts from here, not from the request:
   * a stall of this process before the end of its turn is not Redis being slow.
   */
  private sendIncrements() {
    const batch = [...this.waiting];
    this.waiting = new Map();
    const pipeline = this.redis.pipeline() as unknown as { [INCREMENT_COMMAND]: Increment; exec: Redis['exec'] };
    for (const [key, waiting] of batch) {
      pipeline[INCREMENT_COMMAND](key, String(RATE_WINDOW_SECONDS + 5), String(waiting.length));
    }
    withTimeout(pipeline.exec(), REDIS_TIMEOUT_MS).then(
      (replies) => {
        for (const [index, [key, waiting]] of batch.entries()) {
          const [error, reply] = replies?.[index] ?? [new Error(`no reply for ${key}`), null];
          if (error) {
            this.degrade(error.message);
            for (const resolve of waiting) resolve(null);
            continue;
          }
          this.recover();
          // The requests of the turn take the counts up to the total, in the order they came.
          const first = Number(reply) - waiting.length + 1;
          for (const [position, resolve] of waiting.entries()) resolve(first + position);
        }
      },
      (error: Error) => {
        this.degrade(error.message);
        for (const [, waiting] of batch) for (const resolve of waiting) resolve(null);
      },
    );
  }

  private countInMemory(key: string, window: number, mode: 'increment' | 'read'): number {
    if (window !== this.memoryWindow) {
      // Keys carry their window: a new window starts from nothing.
      this.memory.clear();
      this.memoryWindow = window;
    }
    // Past the bound, new buckets share one: stricter for them, never open.
    const slot = this.memory.has(key) || this.memory.size < MEMORY_BUCKETS ? key : `${this.prefix}rl:overflow`;
    const count = (this.memory.get(slot) ?? 0) + (mode === 'increment' ? 1 : 0);
    if (mode === 'increment') this.memory.set(slot, count);
    return count;
  }

  private degrade(reason: string) {
    const now = Date.now();
    if (this.degradedSince === null) this.degradedSince = now;
    if (now - this.lastWarning >= WARN_EVERY_MS) {
      this.lastWarning = now;
      const since = new Date(this.degradedSince).toISOString();
      this.warn(
        `rate limiter degraded since ${since}: Redis unavailable (${reason}); counting in this process with the same budgets until it answers`,
      );
    }
  }

  private recover() {
    if (this.degradedSince === null) return;
    this.warn(`rate limiter: Redis answers again, budgets are shared across processes once more`);
    this.degradedSince = null;
    this.lastWarning = 0;
  }
}

function decision(count: number, allowed: boolean, limit: number, nowMs: number): RateDecision {
  const window = Math.floor(nowMs / 1000 / RATE_WINDOW_SECONDS);
  const resetSeconds = (window + 1) * RATE_WINDOW_SECONDS;
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds,
    windowSeconds: RATE_WINDOW_SECONDS,
    retryAfterSeconds: Math.max(1, resetSeconds - Math.floor(nowMs / 1000)),
  };
}
