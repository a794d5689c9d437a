import { PassThrough, type Readable, Writable } from 'node:stream';
import type { Part } from './parts.ts';

export class UploadSizeError extends Error {
  readonly expected: number;
  readonly received: number;

  constructor(expected: number, received: number) {
    super(
      received > expected
        ? `The upload is longer than declared: expected ${expected} bytes.`
        : `The upload ended early: expected ${expected} bytes, received ${received}.`,
    );
    this.expected = expected;
    this.received = received;
  }
}

/** A part's stored bytes: all of them, or a stream of exactly `part.blobBytes` as they arrive. */
export type PartBody = Buffer | Readable;

/**
 * Where parts go: `store` puts one part's bytes in the object store (several may run at once) and
 * answers what `commit` then records; `commit` is called in part order, each once its part and
 * every earlier one are stored, so what is recorded is always a prefix of the file. A streamed
 * body that closes before its end (destroyed, without an error) must make `store` fail: that part
 * is not stored.
 */
export type PartSink<Stored> = {
  store: (part: Part, body: PartBody) => Promise<Stored>;
  commit: (part: Part, stored: Stored) => Promise<void>;
};

export type PartWriterOptions = {
  /** Parts stored while the next is read (0: reading and storing take turns). */
  storing: number;
  /** Parts of more stored bytes than this are streamed into `store` instead of buffered; default never. */
  bufferedPartMax?: number;
  /** Runs the writer's waits for the object store: the server's time, not the client's silence. */
  waiting?: <T>(work: () => Promise<T>) => Promise<T>;
  /** What the first commit waits for (earlier chunks of the file); its failure fails every commit. */
  after?: Promise<unknown> | undefined;
};

/** The part being filled: into a buffer, or through to the object store. */
type OpenPart = { part: Part; buffer: Buffer; stream?: never } | { part: Part; stream: PassThrough; buffer?: never };

/** Bytes a streamed part holds between the client and the object store's socket. */
const STREAM_HIGH_WATER_MARK = 1024 * 1024;

/**
 * Cuts a stream of stored bytes into the planned multipart parts and hands each to `sink`, keeping
 * up to `storing` parts being stored while it reads the next: the client's bytes and the object
 * store's writes overlap instead of taking turns. A part up to `bufferedPartMax` is buffered and
 * stored once complete (its buffer reused for a later part); a larger one is streamed to the object
 * store as its bytes arrive, so memory stays at `storing + 1` small parts, or a few stream buffers,
 * whatever the file's size. Too many or too few bytes fail the stream, a part that cannot be stored
 * fails it at once, and an unfinished part is never stored: a streamed one is aborted.
 */
export class PartWriter<Stored> extends Writable {
  private index = 0;
  private open: OpenPart | null = null;
  private filled = 0;
  private receivedBytes = 0;
  private readonly expected: number;
  private readonly parts: Part[];
  private readonly sink: PartSink<Stored>;
  private readonly storing: number;
  private readonly bufferedPartMax: number;
  private readonly waiting: <T>(work: () => Promise<T>) => Promise<T>;
  /** Parts being stored, oldest first: each settles once its part is committed. */
  private readonly pending: Array<Promise<void>> = [];
  /** The last commit in order: the next one waits for it. */
  private committed: Promise<unknown>;
  private readonly spare: Buffer[] = [];
  /** Settles once every byte is in its part: the last parts may still be being stored. */
  readonly received: Promise<void>;
  private allReceived: () => void = () => {};

  constructor(parts: Part[], sink: PartSink<Stored>, options: PartWriterOptions) {
    super({ highWaterMark: 1024 * 1024 });
    this.parts = parts;
    this.sink = sink;
    this.storing = Math.max(0, options.storing);
    this.bufferedPartMax = options.bufferedPartMax ?? Number.POSITIVE_INFINITY;
    this.waiting = options.waiting ?? ((work) => work());
    this.committed = options.after ?? Promise.resolve();
    this.received = new Promise((resolve) => {
      this.allReceived = resolve;
    });
    this.expected = parts.reduce((sum, p) => sum + p.blobBytes, 0);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.consume(chunk).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    // A file whose last (or only) part is empty is complete at the end of input.
    const current = this.parts[this.index];
    const finish =
      current && current.blobBytes === 0 && this.filled === 0
        ? this.begin(current).then(() => this.finish())
        : Promise.resolve();
    finish
      .then(() => {
        // Failing now aborts a part being streamed (see _destroy); stored parts are still committed.
        if (this.index < this.parts.length) throw new UploadSizeError(this.expected, this.receivedBytes);
        this.allReceived();
        return Promise.all(this.pending);
      })
      .then(() => callback(), callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // An interrupted upload (a stalled client, a dropped connection) lets go of its parts at once:
    // a part being streamed is aborted, parts being stored finish on their own and are committed
    // only if all before them were.
    // Destroyed without an error, which the object store sees as a premature close: the S3 SDK's
    // wrapper of a streamed body re-emits the body's error where nobody listens (an uncaught
    // exception), and the upload's error is reported by the pipeline anyway.
    this.open?.stream?.destroy();
    this.open = null;
    this.spare.length = 0;
    this.filled = 0;
    for (const stored of this.pending) stored.catch(() => {});
    callback(error);
  }

  /** Once every part started has been stored and committed, or has failed. */
  async settled(): Promise<void> {
    await Promise.allSettled(this.pending);
  }

  private async consume(chunk: Buffer): Promise<void> {
    this.receivedBytes += chunk.length;
    let offset = 0;
    while (offset < chunk.length) {
      if (this.destroyed) return;
      const part = this.parts[this.index];
      if (!part) throw new UploadSizeError(this.expected, this.receivedBytes);
      if (!this.open) await this.begin(part);
      const open = this.open as OpenPart | null;
      if (!open || this.destroyed) return;
      const take = Math.min(part.blobBytes - this.filled, chunk.length - offset);
      if (open.stream) {
        // The chunk itself goes on, not a copy: nothing upstream writes into a buffer once passed on.
        if (!open.stream.write(chunk.subarray(offset, offset + take))) await this.waiting(() => drained(open.stream));
      } else {
        chunk.copy(open.buffer, this.filled, offset, offset + take);
      }
      this.filled += take;
      offset += take;
      if (this.filled === part.blobBytes) this.finish();
    }
  }

  /**
   * Opens `part` once no more than `storing` parts are being stored: a buffer for it, or its
   * stream, whose store starts now and is counted as being stored from now on.
   */
  private async begin(part: Part): Promise<void> {
    while (this.pending.length > this.storing) {
      const oldest = this.pending.shift();
      await this.waiting(async () => oldest);
    }
    if (this.destroyed) return;
    if (part.blobBytes > this.bufferedPartMax) {
      const stream = new PassThrough({ highWaterMark: STREAM_HIGH_WATER_MARK });
      this.open = { part, stream };
      this.track(part, this.sink.store(part, stream), null);
      return;
    }
    const reused = this.spare.pop();
    this.open = {
      part,
      buffer: reused && reused.length >= part.blobBytes ? reused : Buffer.allocUnsafe(part.blobBytes),
    };
  }

  /** The open part has all its bytes: its stream ends, or its buffer starts being stored. */
  private finish(): void {
    const open = this.open;
    if (!open) return;
    if (open.stream) open.stream.end();
    else this.track(open.part, this.sink.store(open.part, open.buffer.subarray(0, this.filled)), open.buffer);
    this.open = null;
    this.index++;
    this.filled = 0;
  }

  /** Commits `part` once it and every part before it are stored; a failure ends the upload. */
  private track(part: Part, stored: Promise<Stored>, buffer: Buffer | null): void {
    const committed = Promise.all([stored, this.committed]).then(([result]) => this.sink.commit(part, result));
    // A failed part fails every later commit: nothing after a gap is recorded.
    this.committed = committed;
    const settled = committed.finally(() => {
      if (buffer && !this.destroyed) this.spare.push(buffer);
    });
    // Not awaited while the next part is read: a failure ends the upload now, not parts later.
    settled.catch((error: Error) => this.destroy(error));
    this.pending.push(settled);
  }
}

/** Once `stream` takes more bytes, or is gone. */
function drained(stream: PassThrough): Promise<void> {
  if (stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
