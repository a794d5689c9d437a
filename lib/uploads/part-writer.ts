import { Writable } from 'node:stream';
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

/**
 * Where complete parts go: `store` puts one part's bytes in the object store (several may run at
 * once) and answers what `commit` then records; `commit` is called in part order, each once its
 * part and every earlier one are stored, so what is recorded is always a prefix of the file.
 */
export type PartSink<Stored> = {
  store: (part: Part, body: Buffer) => Promise<Stored>;
  commit: (part: Part, stored: Stored) => Promise<void>;
};

/**
 * Cuts a stream of stored bytes into the planned multipart parts and hands each complete part to
 * `sink`, keeping up to `storing` parts being stored while it reads the next: the client's bytes
 * and the object store's writes overlap instead of taking turns (0: they take turns). Memory stays
 * at `storing + 1` parts whatever the file's size (their buffers are reused). Too many or too few
 * bytes fail the stream, a part that cannot be stored fails it at once, and an unfinished part is
 * never stored.
 */
export class PartWriter<Stored> extends Writable {
  private index = 0;
  private buffer: Buffer;
  private filled = 0;
  private received = 0;
  private readonly expected: number;
  private readonly parts: Part[];
  private readonly sink: PartSink<Stored>;
  private readonly storing: number;
  /** Parts being stored, oldest first: each settles once its part is committed. */
  private readonly pending: Array<Promise<void>> = [];
  /** The last commit in order: the next one waits for it. */
  private committed: Promise<void> = Promise.resolve();
  private readonly spare: Buffer[] = [];

  constructor(parts: Part[], sink: PartSink<Stored>, options: { storing: number }) {
    super({ highWaterMark: 1024 * 1024 });
    this.parts = parts;
    this.sink = sink;
    this.storing = Math.max(0, options.storing);
    this.expected = parts.reduce((sum, p) => sum + p.blobBytes, 0);
    this.buffer = Buffer.allocUnsafe(parts[0]?.blobBytes ?? 0);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.consume(chunk).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    // A file whose last (or only) part is empty is complete at the end of input.
    const current = this.parts[this.index];
    const finish = current && current.blobBytes === 0 && this.filled === 0 ? this.flush(current) : Promise.resolve();
    finish
      .then(() => Promise.all(this.pending))
      .then(() => {
        if (this.index < this.parts.length) callback(new UploadSizeError(this.expected, this.received));
        else callback();
      }, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // An interrupted upload (a stalled client, a dropped connection) lets go of its parts at once;
    // parts still being stored finish on their own and are committed only if all before them were.
    this.buffer = Buffer.alloc(0);
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
    this.received += chunk.length;
    let offset = 0;
    while (offset < chunk.length) {
      if (this.destroyed) return;
      const part = this.parts[this.index];
      if (!part) throw new UploadSizeError(this.expected, this.received);
      const take = Math.min(part.blobBytes - this.filled, chunk.length - offset);
      chunk.copy(this.buffer, this.filled, offset, offset + take);
      this.filled += take;
      offset += take;
      if (this.filled === part.blobBytes) await this.flush(part);
    }
  }

  /** Starts storing `part` from the current buffer; waits while more than `storing` parts are. */
  private async flush(part: Part): Promise<void> {
    const body = this.buffer.subarray(0, this.filled);
    const buffer = this.buffer;
    const stored = this.sink.store(part, body);
    const committed = Promise.all([stored, this.committed]).then(([result]) => this.sink.commit(part, result));
    // A failed part fails every later commit: nothing after a gap is recorded.
    this.committed = committed;
    const settled = committed.finally(() => {
      if (!this.destroyed) this.spare.push(buffer);
    });
    // Not awaited while the next part is read: a failure ends the upload now, not parts later.
    settled.catch((error: Error) => this.destroy(error));
    this.pending.push(settled);
    this.index++;
    this.filled = 0;
    while (this.pending.length > this.storing) await this.pending.shift();
    if (this.destroyed) return;
    const next = this.parts[this.index];
    const size = next?.blobBytes ?? 0;
    const reused = this.spare.pop();
    this.buffer = reused && reused.length >= size ? reused : Buffer.allocUnsafe(size);
  }
}
