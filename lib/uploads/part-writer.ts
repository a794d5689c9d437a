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

export type PartSink = (part: Part, body: Buffer) => Promise<void>;

/**
 * Cuts a stream of stored bytes into the planned multipart parts and hands
 * each complete part to `sink` (which uploads and records it) before taking
 * more input: memory stays at one part, whatever the file's size. Too many or
 * too few bytes fail the stream, and the unfinished part is never stored.
 */
export class PartWriter extends Writable {
  private index = 0;
  private buffer: Buffer;
  private filled = 0;
  private received = 0;
  private readonly expected: number;
  private readonly parts: Part[];
  private readonly sink: PartSink;

  constructor(parts: Part[], sink: PartSink) {
    super({ highWaterMark: 1024 * 1024 });
    this.parts = parts;
    this.sink = sink;
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
    finish.then(() => {
      if (this.index < this.parts.length) callback(new UploadSizeError(this.expected, this.received));
      else callback();
    }, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // An interrupted upload (a stalled client, a dropped connection) lets go of its part at once.
    this.buffer = Buffer.alloc(0);
    this.filled = 0;
    callback(error);
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

  private async flush(part: Part): Promise<void> {
    await this.sink(part, this.buffer.subarray(0, this.filled));
    if (this.destroyed) return;
    this.index++;
    this.filled = 0;
    const next = this.parts[this.index];
    if (next && next.blobBytes > this.buffer.length) this.buffer = Buffer.allocUnsafe(next.blobBytes);
  }
}
