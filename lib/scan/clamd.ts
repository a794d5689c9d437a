import { once } from 'node:events';
import { Socket } from 'node:net';
import type { Readable } from 'node:stream';

// Malware scanning with clamd's INSTREAM command over TCP. The protocol is
// spoken here directly rather than through the `clamscan` package, whose
// scanStream() fails three things we need (measured against clamd 1.4):
// - it writes to the socket without waiting for 'drain', so a fast source is
//   buffered whole in memory (a 600 MiB stream peaked at 654 MiB RSS);
// - past StreamMaxLength, clamd answers "INSTREAM size limit exceeded" and
//   resets the connection; clamscan rejects with the EPIPE of its next write
//   and loses the answer, so "too large" looks like a network error;
// - an empty stream sends no command at all and comes back as neither clean
//   nor infected.
//
// Framing: "zINSTREAM\0", then chunks as <4-byte big-endian length><bytes>, then
// a zero length. The answer ends with NUL: "stream: OK", "stream: <name> FOUND",
// or "<text> ERROR".

export type ScanResult =
  | { status: 'clean' }
  | { status: 'infected'; signature: string }
  | { status: 'too_large' }
  | { status: 'error'; message: string };

export type ScannerOptions = {
  host: string;
  port: number;
  /** Longest silence on the connection while connecting and sending. */
  timeoutMs: number;
  /**
   * Longest wait for the verdict after the last byte (`timeoutMs` unless given). clamd says nothing
   * while it scans, and it scans only once the stream is whole: that takes as long as its own
   * MaxScanTime allows (2 minutes by default), after a wait for a free scanning thread when it is
   * busy. Giving up sooner throws away a scan that was on its way and sends the file again.
   */
  verdictTimeoutMs?: number;
};

export type Scanner = {
  /**
   * Reads the whole stream, with backpressure (memory stays constant whatever
   * its size), and resolves with clamd's verdict once it has. Throws when clamd
   * cannot be reached, resets or goes silent, or the stream fails, so that the
   * caller retries; the stream is then destroyed.
   */
  scan(stream: Readable): Promise<ScanResult>;
  /** True if clamd answers PONG; never throws. */
  ping(): Promise<boolean>;
};

/** A failure to talk to clamd (refused, reset, timed out): transient, worth a retry. */
export class ClamdUnavailableError extends Error {
  override name = 'ClamdUnavailableError';
}

// clamd's answers are one line; anything longer is not clamd.
const MAX_REPLY_BYTES = 4096;
// Bigger source chunks are sent as several frames; the length field is 32 bits.
const MAX_FRAME_BYTES = 1024 * 1024;

export function createScanner(options: ScannerOptions): Scanner {
  return {
    async scan(stream) {
      try {
        const socket = await connect(options);
        try {
          const done = new AbortController();
          const reply = readReply(socket, options.timeoutMs).finally(() => done.abort());
          const sent = send(socket, stream, done.signal).then(() => {
            if (!done.signal.aborted) socket.awaitVerdict(options.verdictTimeoutMs ?? options.timeoutMs);
          });
          // clamd may answer before the end of the stream (when it refuses it),
          // and a source that fails to read ends the scan too.
          const result = interpretReply(await Promise.race([reply, sent.then(() => reply)]));
          socket.destroy();
          await sent;
          return result;
        } finally {
          socket.destroy();
        }
      } catch (error) {
        // Unblocks whoever is writing into the stream (a pipeline would wait forever).
        stream.destroy();
        throw error;
      }
    },
    async ping() {
      try {
        const socket = await connect(options);
        try {
          const reply = readReply(socket, options.timeoutMs);
          socket.write('zPING\0');
          return (await reply) === 'PONG';
        } finally {
          socket.destroy();
        }
      } catch {
        return false;
      }
    },
  };
}

/** Maps clamd's answer to a result; exported for tests. Throws on answers that call for a retry. */
export function interpretReply(reply: string): ScanResult {
  const text = reply.trim();
  if (text === 'stream: OK') return { status: 'clean' };
  const found = /^stream: (.+) FOUND$/.exec(text);
  if (found?.[1]) {
    // Out of time, not too large: clamd stops a scan at its MaxScanTime (2 min by default), which a
    // busy clamd reaches on files of any size (the shared dev stack answered this for MiB-sized
    // files under load). Another try, on a less busy clamd, scans it.
    if (found[1] === 'Heuristics.Limits.Exceeded.MaxScanTime') {
      throw new ClamdUnavailableError('clamd stopped the scan at its MaxScanTime');
    }
    // With AlertExceedsMax, a file past MaxFileSize or MaxScanSize (or an
    // archive past the recursion and file-count limits) is reported under this
    // name: clamd could not scan all of it, which is not a detection.
    if (found[1].startsWith('Heuristics.Limits.Exceeded')) return { status: 'too_large' };
    return { status: 'infected', signature: found[1] };
  }
  if (text.startsWith('INSTREAM size limit exceeded')) return { status: 'too_large' };
  // clamd's own ReadTimeout: our source stalled, which a retry may not repeat.
  if (text === 'COMMAND READ TIMED OUT') throw new ClamdUnavailableError('clamd timed out waiting for the stream');
  const error = /^(?:stream: )?(.*?)\s*ERROR$/.exec(text);
  return { status: 'error', message: error?.[1] || `unexpected answer from clamd: ${text.slice(0, 200)}` };
}

async function send(socket: ClamdSocket, stream: Readable, done: AbortSignal): Promise<void> {
  await write(socket, Buffer.from('zINSTREAM\0'), done);
  // for await pulls one chunk at a time: the next read waits for the socket.
  for await (const chunk of stream) {
    // Once clamd has answered, the rest is read and dropped: callers that tee
    // the stream (hashing it, say) still see all of it.
    if (done.aborted) continue;
    const bytes = asBuffer(chunk);
    for (let offset = 0; offset < bytes.length && !done.aborted; offset += MAX_FRAME_BYTES) {
      const frame = bytes.subarray(offset, offset + MAX_FRAME_BYTES);
      const length = Buffer.alloc(4);
      length.writeUInt32BE(frame.length);
      await write(socket, length, done);
      await write(socket, frame, done);
    }
  }
  await write(socket, Buffer.alloc(4), done);
}

function asBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (typeof chunk === 'string') return Buffer.from(chunk);
  // A view, not a copy.
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError('scan() needs a stream of bytes');
}

async function write(socket: ClamdSocket, bytes: Buffer, done: AbortSignal): Promise<void> {
  if (done.aborted || socket.write(bytes)) return;
  try {
    await once(socket, 'drain', { signal: done });
  } catch {
    // Aborted: the reply (or its failure) is what the scan reports.
  }
}

function readReply(socket: ClamdSocket, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const received = () => Buffer.concat(chunks).toString('utf8');
    const fail = (message: string, cause?: unknown) => {
      // A partial answer followed by a close still says what clamd meant.
      if (length > 0) resolve(received());
      else reject(new ClamdUnavailableError(message, { cause }));
    };
    socket.setTimeout(timeoutMs);
    socket.on('data', (data: Buffer) => {
      chunks.push(data);
      length += data.length;
      const text = received();
      const end = text.indexOf('\0');
      if (end >= 0) resolve(text.slice(0, end));
      else if (length > MAX_REPLY_BYTES) reject(new ClamdUnavailableError('clamd sent an oversized answer'));
    });
    socket.on('timeout', () => {
      const silence = socket.verdictTimeoutMs
        ? `no verdict from clamd ${socket.verdictTimeoutMs} ms after the last byte`
        : `no progress on the clamd connection for ${timeoutMs} ms`;
      reject(new ClamdUnavailableError(silence));
      socket.destroy();
    });
    socket.on('end', () => fail('clamd closed the connection without an answer', socket.writeFailure));
    socket.on('error', (error) => fail(`clamd connection failed: ${error.message}`, error));
    socket.on('close', () => fail('clamd connection closed', socket.writeFailure));
  });
}

// When clamd refuses a stream it answers, then closes with our unread bytes
// in its buffer, which resets the connection. Node destroys a socket on its
// first failed write, discarding the answer still waiting to be read (most
// too-large scans lost it, measured): this socket keeps a failed write to
// itself, so the read side can deliver the answer and then end (a read side
// that never ends is cut by the idle timeout).
class ClamdSocket extends Socket {
  writeFailure: Error | undefined;
  /** Set once the whole stream is sent: the silence allowed while clamd scans. */
  verdictTimeoutMs: number | undefined;

  awaitVerdict(timeoutMs: number): void {
    this.verdictTimeoutMs = timeoutMs;
    this.setTimeout(timeoutMs);
  }

  override _write(chunk: unknown, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    super._write(chunk, encoding, (error) => this.#settle(error, callback));
  }

  override _writev(
    chunks: Array<{ chunk: unknown; encoding: BufferEncoding }>,
    callback: (error?: Error | null) => void,
  ): void {
    super._writev?.(chunks, (error) => this.#settle(error, callback));
  }

  #settle(error: Error | null | undefined, callback: (error?: Error | null) => void): void {
    // Never calling back leaves the stream "writing": further writes queue
    // (bounded by the sender, which stops when the read side ends).
    if (error) this.writeFailure ??= error;
    else callback();
  }
}

function connect({ host, port, timeoutMs }: ScannerOptions): Promise<ClamdSocket> {
  return new Promise((resolve, reject) => {
    const socket = new ClamdSocket();
    const fail = (message: string, cause?: unknown) => {
      socket.destroy();
      reject(new ClamdUnavailableError(message, { cause }));
    };
    const onError = (error: Error) => fail(`cannot reach clamd at ${host}:${port}: ${error.message}`, error);
    const onTimeout = () => fail(`cannot reach clamd at ${host}:${port}: no connection after ${timeoutMs} ms`);
    socket.setTimeout(timeoutMs);
    socket.once('error', onError);
    socket.once('timeout', onTimeout);
    socket.connect({ host, port }, () => {
      socket.off('error', onError);
      socket.off('timeout', onTimeout);
      resolve(socket);
    });
  });
}
