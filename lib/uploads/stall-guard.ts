import { Transform, type TransformCallback } from 'node:stream';

/** setTimeout's longest delay; longer ones would fire at once. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export class UploadTimeoutError extends Error {
  readonly kind: 'idle' | 'request';
  readonly ms: number;

  constructor(kind: 'idle' | 'request', ms: number) {
    super(
      kind === 'idle'
        ? `Nothing arrived for ${ms / 1000} s: the upload was stopped. Resume it from the offset HEAD reports.`
        : `The upload request ran longer than ${ms / 1000} s and was stopped. Resume it from the offset HEAD reports.`,
    );
    this.kind = kind;
    this.ms = ms;
  }
}

/**
 * Passes a request body through unchanged, and fails it when the client sends nothing for
 * `idleMs` while the server is waiting for it, or when it is still running at `deadline`
 * (epoch ms), however slowly it trickles. Time the server spends on its own work (storing a
 * part, see `whileBusy`) is not the client's silence: the client cannot send while the
 * server does not read.
 */
export class StallGuard extends Transform {
  private lastActivity = Date.now();
  private busy = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly limits: { idleMs: number; requestMs: number; deadline: number };

  constructor(limits: { idleMs: number; requestMs: number; deadline: number }) {
    super();
    this.limits = limits;
    this.arm(0);
  }

  /** Runs the server's own work on the stream; the client's silence counts from its end. */
  async whileBusy<T>(work: () => Promise<T>): Promise<T> {
    this.busy++;
    try {
      return await work();
    } finally {
      this.busy--;
      this.lastActivity = Date.now();
    }
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.lastActivity = Date.now();
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    clearTimeout(this.timer);
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    clearTimeout(this.timer);
    callback(error);
  }

  private arm(delay: number) {
    this.timer = setTimeout(() => this.check(), Math.min(MAX_DELAY_MS, Math.max(0, delay)));
    this.timer.unref();
  }

  private check() {
    const { idleMs, requestMs, deadline } = this.limits;
    const now = Date.now();
    if (now >= deadline) {
      this.destroy(new UploadTimeoutError('request', requestMs));
      return;
    }
    if (this.busy > 0) this.lastActivity = now;
    const silentFor = now - this.lastActivity;
    if (silentFor >= idleMs) {
      this.destroy(new UploadTimeoutError('idle', idleMs));
      return;
    }
    this.arm(Math.min(idleMs - silentFor, deadline - now));
  }
}
