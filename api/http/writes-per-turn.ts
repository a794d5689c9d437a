import type { ServerResponse } from 'node:http';
import { pipeline, type Readable, Transform } from 'node:stream';

/**
 * How much a connection's writes may queue before a write waits for the client to take some: the
 * batch a turn can send (api/server.ts gives it to every connection). It bounds memory, it does not
 * reserve it: a slow download's response holds at most this much beyond the kernel's buffers.
 */
export const SOCKET_HIGH_WATER_MARK = 1024 * 1024;

/**
 * `body` as is, with what it yields in one turn of the event loop written to `res` in one system
 * call: the response is corked at a turn's first chunk and uncorked once the turn's I/O is over
 * (setImmediate), so the chunks read meanwhile leave as one `writev`. A download's body comes in
 * pieces of 64 KiB at most (a socket read, a segment); each written on its own costs a system
 * call and a wake-up of the client's reader. Measured writing 1 GiB to curl: 0.35 CPU-seconds of
 * the API's main thread as 64 KiB writes, 0.18–0.25 in batches of 16 (bench/README.md).
 * Nothing waits for a batch to fill: a turn that brought one chunk sends one chunk.
 */
export function writesPerTurn(body: Readable, res: ServerResponse): Readable {
  let corked = false;
  const uncork = () => {
    corked = false;
    // end() uncorks the socket itself: a later uncork must not reach the connection's next response.
    if (!res.writableEnded && !res.destroyed) res.uncork();
  };
  const out = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (!corked && !res.writableEnded && !res.destroyed) {
        corked = true;
        res.cork();
        setImmediate(uncork);
      }
      callback(null, chunk);
    },
  });
  // A failure of the body reaches the response through `out`, which hapi listens to.
  pipeline(body, out, () => undefined);
  return out;
}
