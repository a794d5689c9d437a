import pg from 'pg';
import type { CredentialRow } from '../db/queries/api-keys.ts';

// The API's credentials, kept in process so that an authenticated request does
// not wait for PostgreSQL to look its key up (docs/api-keys.md, "Revocation").
// Correctness comes first: a key that changes (revoked, deactivated, its scopes,
// addresses, expiry or value changed) must stop working everywhere at once.
//
// - Every such change fires `NOTIFY valise_api_keys_changed` from the database
//   itself (triggers of migration 0020), whichever process or tool makes it, and
//   every API process LISTENs: the cache is emptied when the change commits.
// - The process that makes a change also empties its own cache at once
//   (`forget()`), not waiting for its notification to come back.
// - While the LISTEN connection is not up (starting, lost, reconnecting) the
//   cache is not used at all, and it starts empty when the connection is back:
//   no notification can be missed unseen.
// - A connection can also die silently (a NAT's idle timeout, a pooler): no
//   error, no end, and no notification ever again. So it must keep proving it
//   is alive: a query on it every second, whose answer comes after every
//   notification committed before it was sent. Entries are served only while
//   such a proof is under 3 s old; a heartbeat unanswered for 5 s replaces the
//   connection.
// - A lookup that started before a change cannot put its stale row back after
//   the change emptied the cache: each entry is stored only if no change came
//   in between (the generation check).
// Misses are never cached: a key created a moment ago works at once.

export const CHANNEL = 'valise_api_keys_changed';
export const APPLICATION_NAME = 'valise-credential-cache';
const MAX_ENTRIES = 10_000;
/** Longest an unchanged entry is kept: only to bound memory for keys no longer used. */
const ENTRY_MS = 5 * 60_000;
const RECONNECT_MS = [100, 500, 1_000, 5_000] as const;
const HEARTBEAT_MS = 1_000;
/** Entries are served only while a heartbeat sent this recently has been answered. */
const PROVEN_MS = 3_000;
/** A query on the LISTEN connection unanswered this long: the connection is taken for dead. */
const DEAD_MS = 5_000;

type Entry = { row: CredentialRow; storedAt: number };

export class CredentialCache {
  private readonly entries = new Map<string, Entry>();
  private generation = 0;
  private listening = false;
  /** The LISTEN connection, up or being opened. */
  private client: pg.Client | null = null;
  private databaseUrl = '';
  private closed = false;
  private attempts = 0;
  /** When the last answered heartbeat (or the LISTEN) was sent. */
  private provenAt = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly warn: (message: string) => void;

  constructor(warn: (message: string) => void = (message) => process.stderr.write(`api: ${message}\n`)) {
    this.warn = warn;
  }

  /** A lookup's ticket: present it to `store` so that a change in between keeps the row out. */
  ticket(): number {
    return this.generation;
  }

  get(hash: Buffer): CredentialRow | null {
    if (!this.listening || Date.now() - this.provenAt > PROVEN_MS) return null;
    const key = hash.toString('base64');
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (Date.now() - entry.storedAt > ENTRY_MS) {
      this.entries.delete(key);
      return null;
    }
    return entry.row;
  }

  store(hash: Buffer, row: CredentialRow, ticket: number): void {
    if (!this.listening || ticket !== this.generation) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(hash.toString('base64'), { row, storedAt: Date.now() });
  }

  /** A key changed: nothing cached before now may be used again. */
  forget(): void {
    this.generation++;
    this.entries.clear();
  }

  /** Listens for changes on a connection of its own; until it is up, nothing is cached. */
  async listen(databaseUrl: string): Promise<void> {
    if (this.closed) return;
    this.databaseUrl = databaseUrl;
    const client = new pg.Client({
      connectionString: databaseUrl,
      connectionTimeoutMillis: 5_000,
      // How operators and tests find it in pg_stat_activity, whose query column shows the heartbeat.
      application_name: APPLICATION_NAME,
      // pg rejects a query unanswered this long, and lost() then replaces the connection.
      query_timeout: DEAD_MS,
    });
    this.client = client;
    client.on('notification', () => this.forget());
    client.on('error', (error: Error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    let listenSentAt = 0;
    try {
      await client.connect();
      listenSentAt = Date.now();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      this.lost(client, error as Error);
      return;
    }
    if (this.closed || this.client !== client) {
      await client.end().catch(() => {});
      return;
    }
    this.attempts = 0;
    // Changes made while not listening went unheard: start empty.
    this.forget();
    this.provenAt = listenSentAt;
    this.listening = true;
    this.beat(client);
  }

  /** Proves the connection alive once a second, for as long as it is the current one. */
  private beat(client: pg.Client): void {
    clearInterval(this.heartbeat);
    let pending = false;
    this.heartbeat = setInterval(() => {
      if (this.client !== client || pending) return;
      pending = true;
      const sentAt = Date.now();
      client.query('SELECT 1').then(
        () => {
          pending = false;
          if (this.client === client) this.provenAt = sentAt;
        },
        (error: Error) => this.lost(client, new Error(`heartbeat failed: ${error.message}`)),
      );
    }, HEARTBEAT_MS).unref();
  }

  private lost(client: pg.Client, error: Error): void {
    // An error and the end of the same connection are one loss.
    if (this.client !== client) return;
    this.listening = false;
    this.forget();
    this.client = null;
    clearInterval(this.heartbeat);
    client.end().catch(() => {});
    // A silent connection would never finish end()'s goodbye: cut it.
    client.connection.stream.destroy();
    if (this.closed) return;
    const delayMs = RECONNECT_MS[Math.min(this.attempts, RECONNECT_MS.length - 1)] ?? 5_000;
    if (this.attempts === 0) this.warn(`credential cache off until its LISTEN connection is back: ${error.message}`);
    this.attempts++;
    setTimeout(() => void this.listen(this.databaseUrl), delayMs).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    clearInterval(this.heartbeat);
    this.forget();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }
}
