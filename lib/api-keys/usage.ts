import type { DatabasePool } from 'slonik';
import { sql } from '../db/sql.ts';

/**
 * Counts uses of keys that have no usage cap. Writing a counter on every
 * request would serialise all requests of a key on one row lock and one WAL
 * flush each; instead each process adds its counts up and writes them once a
 * second. Keys with `max_uses` bypass this and are counted exactly, in line.
 */
export class UsageRecorder {
  private pending = new Map<string, { count: number; lastUsedAt: Date }>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  private readonly db: DatabasePool;

  constructor(db: DatabasePool, intervalMs = 1_000) {
    this.db = db;
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  record(apiKeyId: string, at = new Date()): void {
    const entry = this.pending.get(apiKeyId);
    if (entry) {
      entry.count++;
      entry.lastUsedAt = at;
    } else {
      this.pending.set(apiKeyId, { count: 1, lastUsedAt: at });
    }
  }

  /** Writes what has been counted; concurrent calls queue behind each other. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write()).catch(() => {});
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const rows = [...batch].map(([id, use]) => [id, use.count, use.lastUsedAt.toISOString()]);
    try {
      await this.db.query(sql.typeAlias('void')`
        UPDATE api_keys k
        SET used_count = k.used_count + u.count,
            last_used_at = GREATEST(k.last_used_at, u.last_used_at)
        FROM ${sql.unnest(rows, ['uuid', 'int4', 'timestamptz'])} AS u(id, count, last_used_at)
        WHERE k.id = u.id`);
    } catch (error) {
      // Put the counts back so the next flush retries them.
      for (const [id, use] of batch) {
        const entry = this.pending.get(id);
        if (entry) entry.count += use.count;
        else this.pending.set(id, use);
      }
      throw error;
    }
  }
}
