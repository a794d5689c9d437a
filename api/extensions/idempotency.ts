import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Lifecycle, Request, ResponseToolkit } from '@hapi/hapi';
import { deriveKey, hmacSha256, seal, unseal } from '../../lib/crypto/secrets.ts';
import { type Claim, createIdempotencyQueries, type RecordOwner } from '../../lib/db/queries/idempotency.ts';
import { DomainError } from '../../lib/errors.ts';
import type { Services } from '../../lib/services.ts';
import { headerOf } from '../types.ts';

// Idempotency-Key on writes: the first request with a key claims it and runs;
// the same key with the same request replays the stored response; a different
// request is a conflict. Concurrent twins wait for the first to finish, so a
// burst of identical retries executes once.
//
// Records belong to the key that made the request, an API key or an intake's
// publishable key: another key of the workspace using the same Idempotency-Key
// has a namespace of its own and never sees the record (its request runs as its
// own). A stored response may carry a
// once-shown secret (a key value, a whsec_ secret, upload URLs), so it is sealed
// with AES-256-GCM under a key derived from VALISE_SECRET, the record's identity
// as associated data: moved onto another record, it does not open. The request
// fingerprint is an HMAC, so a low-entropy value in a body (a transfer
// password) cannot be tested against it offline.
//
// A claim lasts while its request lives: the request renews its lock every few seconds, and a
// claim whose lock ran out (its process died, or the database went away just as the claim
// committed, so the request never learnt it held the key) is taken over by the next request with
// the same body, instead of keeping the key `in_progress` for 24 hours (migration 0041).

const MUTATING = new Set(['post', 'put', 'patch', 'delete']);
const WAIT_STEP_MS = 25;
const WAIT_LIMIT_MS = 30_000;
/** How long a claim holds its key unless renewed: well within WAIT_LIMIT_MS, so a waiting twin takes over an abandoned one. */
const CLAIM_LOCK_MS = 20_000;
const CLAIM_RENEW_MS = 5_000;

export async function onPreHandler(request: Request, h: ResponseToolkit): Promise<Lifecycle.ReturnValue> {
  const header = headerOf(request, 'idempotency-key');
  if (header === undefined || !MUTATING.has(request.method)) return h.continue;
  const owner = await ownerOf(request);
  if (!owner) return h.continue;
  if (header.length < 8 || header.length > 255) {
    throw new DomainError('validation_error', 'Idempotency-Key must be 8 to 255 characters long.', {
      param: 'Idempotency-Key',
    });
  }
  const { services } = request.server.app;
  const records = createIdempotencyQueries(services.db);
  const fingerprint = fingerprintOf(request, keysOf(services).fingerprint);
  const claim: Claim = { id: randomUUID(), lockMs: CLAIM_LOCK_MS };
  const claimed = async (attempt: () => Promise<boolean>) => {
    try {
      if (!(await attempt())) return false;
    } catch (error) {
      // The claim may have committed all the same: released once the database answers again.
      await untilWritten(request, () => records.release(owner, header, claim));
      throw error;
    }
    hold(request, owner, header, claim);
    return true;
  };
  if (await claimed(() => records.claim(owner, header, fingerprint, claim))) return h.continue;
  for (let waited = 0; waited <= WAIT_LIMIT_MS; waited += WAIT_STEP_MS) {
    const record = await records.find(owner, header, CLAIM_LOCK_MS);
    if (!record) {
      // The first request failed on our side and released the key: run this one.
      if (await claimed(() => records.claim(owner, header, fingerprint, claim))) return h.continue;
      continue;
    }
    if (!record.bound) {
      throw new DomainError(
        'idempotency_conflict',
        'This Idempotency-Key was used before an upgrade and its response is no longer kept; use a new key.',
        { param: 'Idempotency-Key' },
      );
    }
    if (record.request_fingerprint !== fingerprint) {
      throw new DomainError('idempotency_conflict', 'This Idempotency-Key was already used with a different request.', {
        param: 'Idempotency-Key',
      });
    }
    if (record.state === 'completed' && record.response_status !== null && record.response_sealed !== null) {
      let body: unknown;
      try {
        const sealed = unseal(
          keysOf(services).seal,
          record.response_sealed,
          identity(owner, header, record.response_status),
        );
        body = JSON.parse(sealed);
      } catch (error) {
        // Altered, moved, or sealed under another VALISE_SECRET: never served.
        request.log(['error', 'idempotency'], `stored response cannot be opened: ${(error as Error).message}`);
        throw new DomainError(
          'idempotency_conflict',
          'The stored response of this Idempotency-Key cannot be replayed; send the request with a new key.',
          { param: 'Idempotency-Key' },
        );
      }
      request.app.idempotency = { key: header, replayed: true, owner };
      return h
        .response(body as object)
        .code(record.response_status)
        .header('X-Service-Idempotent-Replay', 'true')
        .takeover();
    }
    // The request that claimed the key is gone without settling it: this one runs in its place.
    if (record.abandoned && (await claimed(() => records.takeOver(owner, header, fingerprint, claim)))) {
      return h.continue;
    }
    await delay(WAIT_STEP_MS);
  }
  throw new DomainError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress.', {
    param: 'Idempotency-Key',
  });
}

/** Holds a claimed key for the request: its lock is renewed until the request settles it or ends. */
function hold(request: Request, owner: RecordOwner, key: string, claim: Claim) {
  const records = createIdempotencyQueries(request.server.app.services.db);
  const renewal = setInterval(() => {
    records.renew(owner, key, claim).then(
      (held) => held || stopRenewing(),
      () => undefined, // the database is away: the next beat tries again
    );
  }, CLAIM_RENEW_MS).unref();
  const stopRenewing = () => clearInterval(renewal);
  // A client that hangs up before the answer: onPreResponse may never run for it.
  request.raw.res.once('close', stopRenewing);
  request.app.idempotency = { key, replayed: false, owner, claim, stopRenewing };
}

/** Stores the response of a successful request that claimed a key, or frees the key after a failure. */
export async function completeIdempotency(request: Request, status: number, body: unknown): Promise<void> {
  const state = request.app.idempotency;
  if (!state || state.replayed) return;
  state.stopRenewing();
  const { owner, claim } = state;
  const { services } = request.server.app;
  const records = createIdempotencyQueries(services.db);
  // Failed requests changed nothing (domain writes are transactional), so the
  // key is freed: the client can fix the request, add an mfa_code, and resend.
  if (status >= 400) await untilWritten(request, () => records.release(owner, state.key, claim));
  else {
    const sealed = seal(keysOf(services).seal, JSON.stringify(body ?? null), identity(owner, state.key, status));
    await untilWritten(request, () => records.complete(owner, state.key, claim, status, sealed));
  }
}

/** Waits between attempts at a record the database refused, doubling up to the last. */
const REWRITE_DELAYS_MS = [250, 500, 1_000, 2_000, 5_000];
/** How long a record the database refused is tried again: past a restart, not forever. */
const REWRITE_FOR_MS = 10 * 60_000;

/**
 * Writes a record now, or, when the database refuses it (it is restarting: the request itself was
 * likely answered 503 for the same reason), again in the background until it lands. Left in
 * progress, a key would keep its retries waiting, then refused, for its 24 hours: a failed request's
 * client must be able to retry with the same key as soon as the database is back, and a successful
 * one's must get its answer replayed.
 */
async function untilWritten(request: Request, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (error) {
    request.log(['warn', 'idempotency'], `idempotency record not written, retrying: ${(error as Error).message}`);
    const deadline = Date.now() + REWRITE_FOR_MS;
    const retry = (attempt: number) => {
      const delay = REWRITE_DELAYS_MS[Math.min(attempt, REWRITE_DELAYS_MS.length - 1)] ?? 5_000;
      setTimeout(() => {
        write().catch(() => {
          if (Date.now() < deadline) retry(attempt + 1);
          else request.log(['error', 'idempotency'], 'idempotency record never written: its key stays in progress');
        });
      }, delay).unref();
    };
    retry(0);
  }
}

/** The credential a request came with, or null on the routes that take no Idempotency-Key. */
async function ownerOf(request: Request): Promise<RecordOwner | null> {
  const { caller, submitter } = request.auth.credentials?.app ?? {};
  if (caller) {
    const { workspaceId, environment, apiKeyId } = caller;
    return { workspaceId, environment, keyKind: 'api_key', keyId: apiKeyId };
  }
  if (submitter) {
    const { workspaceId, environment, publishableKeyId } = submitter;
    return { workspaceId, environment, keyKind: 'publishable_key', keyId: publishableKeyId };
  }
  return (await request.route.settings.plugins?.valise?.idempotencyOwner?.(request)) ?? null;
}

/** The associated data of a sealed response: the record it belongs to, and its status. */
function identity(owner: RecordOwner, key: string, status: number): string {
  // An API key's records keep the identity they were sealed with before other credentials had records.
  const keyName = owner.keyKind === 'api_key' ? owner.keyId : `${owner.keyKind}:${owner.keyId}`;
  return JSON.stringify(['idempotency/v1', owner.workspaceId, owner.environment, keyName, key, status]);
}

const derived = new WeakMap<Services, { seal: Buffer; fingerprint: Buffer }>();

function keysOf(services: Services) {
  let keys = derived.get(services);
  if (!keys) {
    keys = {
      seal: deriveKey(services.config.secret, 'idempotency-seal'),
      fingerprint: deriveKey(services.config.secret, 'idempotency-fingerprint'),
    };
    derived.set(services, keys);
  }
  return keys;
}

function fingerprintOf(request: Request, key: Buffer): string {
  return hmacSha256(
    key,
    `${request.method} ${request.path}\n${canonicalJson(request.query)}\n${canonicalJson(request.payload ?? null)}`,
  ).toString('hex');
}

/**
 * No route's schema nests anywhere near this deep; a body that does is refused
 * before its fingerprint is computed, rather than overflowing the stack.
 */
const MAX_BODY_DEPTH = 64;

function canonicalJson(value: unknown, depth = 0): string {
  if (depth > MAX_BODY_DEPTH) {
    throw new DomainError('validation_error', `The request body is nested more than ${MAX_BODY_DEPTH} levels deep.`);
  }
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item, depth + 1)).join(',')}]`;
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v, depth + 1)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
