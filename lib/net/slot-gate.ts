/** A slot held by one request; `release` gives it back (at most once, however often it is called). */
export type Slot<Refusal extends string> = { ok: true; release: () => void } | { ok: false; reason: Refusal };

/**
 * Counts the requests holding a slot now: in all, up to `max`, and per key along each of a few
 * dimensions (a client address, a transfer…), each up to its own limit. The first bound reached
 * names the refusal: the process being full first, then the dimensions in the order given.
 */
export class SlotGate<Dimension extends string, Busy extends string> {
  private readonly counts = new Map<string, number>();
  private total = 0;
  private readonly max: number;
  private readonly busy: Busy;
  private readonly limits: ReadonlyArray<readonly [Dimension, number]>;

  constructor(max: number, busy: Busy, limits: ReadonlyArray<readonly [Dimension, number]>) {
    this.max = max;
    this.busy = busy;
    this.limits = limits;
  }

  enter(keys: Readonly<Record<Dimension, string>>): Slot<Dimension | Busy> {
    if (this.total >= this.max) return { ok: false, reason: this.busy };
    const held = this.limits.map(([dimension, limit]) => ({
      dimension,
      limit,
      key: `${dimension}\0${keys[dimension]}`,
    }));
    const full = held.find(({ key, limit }) => (this.counts.get(key) ?? 0) >= limit);
    if (full) return { ok: false, reason: full.dimension };
    this.total++;
    for (const { key } of held) this.bump(key, 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        for (const { key } of held) this.bump(key, -1);
      },
    };
  }

  /** Slots held now. */
  active(): number {
    return this.total;
  }

  private bump(key: string, by: number) {
    const next = (this.counts.get(key) ?? 0) + by;
    if (next > 0) this.counts.set(key, next);
    else this.counts.delete(key);
  }
}
