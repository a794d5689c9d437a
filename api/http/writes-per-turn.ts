import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { pipeline, type Readable, Transform } from 'node:stream';

/**
 * How much a download's connection may queue before a write waits for the client to take some:
 * the batch one turn can send. It bounds memory, it does not reserve it: a slow client's
 * download holds at most this much beyond the kernel's socket buffers.
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
  if (res.socket) raiseWriteQueue(res.socket);
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

/**
 * Lets `socket` queue SOCKET_HIGH_WATER_MARK bytes before a write returns false. At Node's default
 * (64 KiB) the first corked chunk of a turn fills the queue, `pipe` pauses, and corking gains
 * nothing (measured: it lost). Node sets a stream's queue only when creating it, and its HTTP
 * server only for both directions of every connection (`highWaterMark`): that would also read
 * every request body 1 MiB ahead, which changed how a refused upload ends for its sender
 * (test/sdk/busy-upload.test.ts). So the download's own connection is raised here, through the
 * writable state Node keeps the limit in (what `writableHighWaterMark` reads); never lowered, as a
 * kept-alive connection's later answers lose nothing by it.
 */
function raiseWriteQueue(socket: Socket): void {
  const state = (socket as unknown as { _writableState?: { highWaterMark?: unknown } })._writableState;
  if (state && typeof state.highWaterMark === 'number' && state.highWaterMark < SOCKET_HIGH_WATER_MARK) {
    state.highWaterMark = SOCKET_HIGH_WATER_MARK;
  }
}
