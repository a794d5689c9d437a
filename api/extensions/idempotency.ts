import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Lifecycle, Request, ResponseToolkit } from '@hapi/hapi';
import { createIdempotencyQueries } from '../../lib/db/queries/idempotency.ts';
import { apiError } from '../../lib/errors.ts';
import { headerOf } from '../types.ts';

// Idempotency-Key on writes: the first request with a key claims it and runs;
// the same key with the same request replays the stored response; a different
// request is a conflict. Concurrent twins wait for the first to finish, so a
// burst of identical retries executes once.

const MUTATING = new Set(['post', 'put', 'patch', 'delete']);
const WAIT_STEP_MS = 25;
const WAIT_LIMIT_MS = 30_000;

export async function onPreHandler(request: Request, h: ResponseToolkit): Promise<Lifecycle.ReturnValue> {
  const header = headerOf(request, 'idempotency-key');
  const caller = request.auth.credentials?.app?.caller;
  if (header === undefined || !MUTATING.has(request.method) || !caller) return h.continue;
  if (header.length < 8 || header.length > 255) {
    throw apiError('validation_error', 'Idempotency-Key must be 8 to 255 characters long.', {
      param: 'Idempotency-Key',
    });
  }
  const tenant = { workspaceId: caller.workspaceId, environment: caller.environment };
  const records = createIdempotencyQueries(request.server.app.services.db);
  const fingerprint = fingerprintOf(request);
  if (await records.claim(tenant, header, fingerprint)) {
    request.app.idempotency = { key: header, replayed: false };
    return h.continue;
  }
  for (let waited = 0; waited <= WAIT_LIMIT_MS; waited += WAIT_STEP_MS) {
    const record = await records.find(tenant, header);
    if (!record) {
      // The first request failed on our side and released the key: run this one.
      if (await records.claim(tenant, header, fingerprint)) {
        request.app.idempotency = { key: header, replayed: false };
        return h.continue;
      }
      continue;
    }
    if (record.request_fingerprint !== fingerprint) {
      throw apiError('idempotency_conflict', 'This Idempotency-Key was already used with a different request.', {
        param: 'Idempotency-Key',
      });
    }
    if (record.state === 'completed' && record.response_status !== null) {
      request.app.idempotency = { key: header, replayed: true };
      return h
        .response(record.response_body as object)
        .code(record.response_status)
        .header('X-Service-Idempotent-Replay', 'true')
        .takeover();
    }
    await delay(WAIT_STEP_MS);
  }
  throw apiError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress.', {
    param: 'Idempotency-Key',
  });
}

/** Stores the response of a successful request that claimed a key, or frees the key after a failure. */
export async function completeIdempotency(request: Request, status: number, body: unknown): Promise<void> {
  const state = request.app.idempotency;
  const caller = request.auth.credentials?.app?.caller;
  if (!state || state.replayed || !caller) return;
  const tenant = { workspaceId: caller.workspaceId, environment: caller.environment };
  const records = createIdempotencyQueries(request.server.app.services.db);
  // Failed requests changed nothing (domain writes are transactional), so the
  // key is freed: the client can fix the request, add an mfa_code, and resend.
  if (status >= 400) await records.release(tenant, state.key);
  else await records.complete(tenant, state.key, status, body);
}

function fingerprintOf(request: Request): string {
  return createHash('sha256')
    .update(
      `${request.method} ${request.path}\n${canonicalJson(request.query)}\n${canonicalJson(request.payload ?? null)}`,
    )
    .digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
