/**
 * `work`, or a rejection once `ms` have passed without its answer (the work itself is not
 * cancelled). When the timer fires, the answer gets one turn of the event loop's I/O first: after a
 * stall of the process itself (a long synchronous task), Node runs expired timers before it reads
 * the sockets, so an answer that came back in time would otherwise lose to its own timeout.
 */
export async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => setImmediate(() => reject(new Error(`no answer within ${ms} ms`))), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
