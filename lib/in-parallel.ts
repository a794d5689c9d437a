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
