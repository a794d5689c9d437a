// A tus client sends a file as a series of PATCHes, each one sent once the one before is answered.
// Answered only once its part is stored, every PATCH left the object store idle while its client
// read the answer and sent the next: a 1 GiB upload in 8 MiB chunks ran at 0.77 of one PUT. So a
// PATCH that does not end its file is answered once its bytes are received (docs/tus.md, "Speed"),
// and its part goes on being stored and committed behind it while the next PATCH is received. The
// session is what lives between them, in the process that answered: the file's lease, the offset
// the next chunk must start at, and the chain of commits, kept in part order. It ends, and gives
// the lease back, as soon as no request is in it and every part it answered is committed.
//
// Nothing is lost when a part fails or the process dies before committing it: the durable offset
// (HEAD, bytes_received) stays where the committed parts end, the next PATCH's `Upload-Offset` no
// longer matches and is refused with 409, and a tus client then asks HEAD and sends the rest from
// there. The PATCH that ends the file is answered only once every part is stored and committed and
// the file is complete: a client is never told a file is uploaded before it is.

/** The file's lease, as a request or a session holds it. */
export type HeldLease = {
  readonly id: string;
  /** Given back by a write (a commit that releases it, the completion): nothing left to release. */
  released: boolean;
  /** Stops renewing it and gives it back unless already released. */
  end(): Promise<void>;
};

/** The parts of an answered chunk failed: the chunks after it cannot be committed either. */
export class UploadSessionBroken extends Error {
  constructor(cause: unknown) {
    super('an earlier chunk of this upload could not be stored', { cause });
  }
}

export class UploadSession {
  /** Where the next chunk must start: the end of the last chunk answered. */
  offset: number;
  readonly lease: HeldLease;
  /**
   * Settles once the parts of every chunk answered are committed, in order; rejects with
   * UploadSessionBroken once one of them failed. A joining request commits after it.
   */
  committed: Promise<void> = Promise.resolve();
  /** Once the session is over: its parts settled, its lease given back. */
  readonly ended: Promise<void>;
  private receiving = true;
  /** The answered chunks whose parts are still being stored, oldest first: each settles once committed. */
  private readonly storing: Array<Promise<void>> = [];
  private broken = false;
  private over = false;
  private endNow: () => void = () => {};
  private readonly onEnd: () => void;
  private readonly onFailure: (error: unknown) => void;

  constructor(offset: number, lease: HeldLease, onEnd: () => void, onFailure: (error: unknown) => void) {
    this.offset = offset;
    this.lease = lease;
    this.onEnd = onEnd;
    this.onFailure = onFailure;
    this.ended = new Promise((resolve) => {
      this.endNow = resolve;
    });
  }

  /** A request is receiving into the session now. */
  get busy(): boolean {
    return this.receiving;
  }

  /** Whether a request may still join: none of its chunks failed and it has not ended. */
  get joinable(): boolean {
    return !this.broken && !this.over;
  }

  /** A request starting at `start` takes the session, if it is free and that is where its next chunk starts. */
  join(start: number): boolean {
    if (this.receiving || !this.joinable || start !== this.offset) return false;
    this.receiving = true;
    return true;
  }

  /**
   * The joined request's bytes up to `end` are received and answered; `stored` settles once its
   * parts are committed. Chunks then wait for them, up to `depth` chunks being stored at once.
   */
  answered(end: number, stored: Promise<void>): void {
    this.offset = end;
    this.receiving = false;
    this.committed = stored.catch((error: unknown) => {
      if (!this.broken) this.onFailure(error);
      this.broken = true;
      throw error instanceof UploadSessionBroken ? error : new UploadSessionBroken(error);
    });
    // Later chunks see a failure through `committed`; this branch only counts the chunk out.
    const settled: Promise<void> = this.committed
      .catch(() => undefined)
      .finally(() => {
        this.storing.splice(this.storing.indexOf(settled), 1);
        this.endIfIdle();
      });
    this.storing.push(settled);
  }

  /** The joined request ended without being answered early (it failed, or it ended the file). */
  left(): void {
    this.receiving = false;
    this.endIfIdle();
  }

  /** Waits while `depth` chunks or more are still being stored: memory stays at a few parts per file. */
  async room(depth: number): Promise<void> {
    while (this.storing.length >= Math.max(1, depth)) await this.storing[0];
  }

  private endIfIdle(): void {
    if (this.receiving || this.storing.length > 0 || this.over) return;
    this.over = true;
    // Listed until its lease is given back: a request arriving meanwhile waits for that, rather than
    // finding the lease still held. One not given back (the database gone) expires by itself.
    this.lease
      .end()
      .catch(this.onFailure)
      .finally(() => {
        this.onEnd();
        this.endNow();
      });
  }
}

/** The sessions of this process, by file id (an upload token names it: lib/uploads/resolve.ts). */
export class UploadSessions {
  private readonly sessions = new Map<string, UploadSession>();
  private readonly onFailure: (error: unknown) => void;

  constructor(onFailure: (error: unknown) => void = () => {}) {
    this.onFailure = onFailure;
  }

  /** The file's session, taken by a request starting at `start`; undefined when there is none to join. */
  join(file: string, start: number): UploadSession | undefined {
    const session = this.sessions.get(file);
    return session?.join(start) ? session : undefined;
  }

  /** Opens the file's session on a lease its first request holds; the request is in it. */
  open(file: string, offset: number, lease: HeldLease): UploadSession {
    const session = new UploadSession(offset, lease, () => this.sessions.delete(file), this.onFailure);
    this.sessions.set(file, session);
    return session;
  }

  /** Whether a request is receiving into the file's session now: a twin request is refused, not queued. */
  receiving(file: string): boolean {
    return this.sessions.get(file)?.busy === true;
  }

  /** Where the file's session expects its next chunk; undefined without one to join. */
  offset(file: string): number | undefined {
    const session = this.sessions.get(file);
    return session?.joinable ? session.offset : undefined;
  }

  /** Waits until this process holds no session of the file: its answered parts committed or failed. */
  async settled(file: string): Promise<boolean> {
    const session = this.sessions.get(file);
    if (!session) return false;
    await session.ended;
    return true;
  }

  /** Sessions open now (a process stopping waits for them). */
  get size(): number {
    return this.sessions.size;
  }

  /** Once every session of this process has ended. */
  async drained(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((session) => session.ended));
  }
}
