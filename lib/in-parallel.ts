/** Runs `task` on every item, at most `limit` at a time, in order of start; the first failure rejects. */
export async function inParallel<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * At most `limit` holders at once; the others wait in the order they came, and a freed place
 * passes straight to the first in line. Used where too many at once would each go slower than one
 * after the other: webhook POSTs (lib/webhooks/sender.ts), scans streaming to clamd
 * (lib/composition.ts says why).
 */
export class Semaphore {
  private active = 0;
  private readonly queue: Array<() => void> = [];
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  /**
   * Resolves once a place is free, with the function that frees it again (call it once, however
   * the work ends; a second call does nothing). `waiting`, if given, is called every `everyMs`
   * until then: an activity waiting for its turn heartbeats so.
   */
  async acquire(waiting?: { beat: () => void; everyMs: number }): Promise<() => void> {
    if (this.active < this.limit) {
      this.active++;
    } else {
      const beat = waiting && setInterval(waiting.beat, waiting.everyMs);
      try {
        // A freed place passes straight to the first in line: `active` is not decremented then.
        await new Promise<void>((resolve) => this.queue.push(resolve));
      } finally {
        clearInterval(beat);
      }
    }
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    };
  }

  /** Runs `task` once it has a place, and frees the place when it settles. */
  async run<T>(task: () => Promise<T>, waiting?: { beat: () => void; everyMs: number }): Promise<T> {
    const free = await this.acquire(waiting);
    try {
      return await task();
    } finally {
      free();
    }
  }

  /** Holders now, and those waiting for a place. */
  usage(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.queue.length };
  }
}
