import { randomUUID } from 'node:crypto';
import test from 'ava';
import { z } from 'zod';
import { createIdempotencyQueries } from '../lib/db/queries/idempotency.ts';
import { sql } from '../lib/db/sql.ts';
import { startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

// An Idempotency-Key's claim lasts while its request lives (api/extensions/idempotency.ts,
// migration 0041). A request whose process died, or that never learnt its claim had committed (the
// database gone at that moment: test/faults/postgres-restart.test.ts), leaves the key `in_progress`
// without anyone to settle it; the next request with the same body must take it over once the
// claim's lock has run out, not wait 30 s for a 409 for the record's 24 hours. Simulated here by
// putting a completed record back in progress, as the dead request would have left it.

let api: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  api = await startApi();
  ws = await api.workspace('Idempotency claims');
});
test.after.always(() => api.close());

const body = { files: [{ name: 'claim.bin', size: 10 }] };
const create = (key: string) =>
  api.call('POST', '/v1/transfers', { key: ws.keys.live, headers: { 'idempotency-key': key }, body });

/** Leaves the key's record as a request that claimed it and died would: in progress, its lock as given. */
async function abandon(key: string, lock: ReturnType<typeof sql.fragment>, claimId: string | null = randomUUID()) {
  await api.services.db.query(sql.typeAlias('void')`
    UPDATE idempotency_records
    SET state = 'in_progress', response_status = NULL, response_sealed = NULL, claim_id = ${claimId}, locked_until = ${lock}
    WHERE workspace_id = ${ws.workspace_id} AND idempotency_key = ${key}`);
}

test('a claim abandoned by a request that is gone is taken over by the same request, which runs', async (t) => {
  const key = `claim-${randomUUID()}`;
  const first = await create(key);
  t.is(first.status, 201);
  await abandon(key, sql.fragment`now() - interval '1 second'`);
  const started = Date.now();
  const retried = await create(key);
  t.is(retried.status, 201, retried.text);
  t.true(Date.now() - started < 5_000, 'taken over at once, not after the 30 s wait');
  t.not(retried.body.transfer.id, first.body.transfer.id, 'it ran: the abandoned request had kept no answer');
  const replay = await create(key);
  t.is(replay.headers.get('x-service-idempotent-replay'), 'true');
  t.is(replay.body.transfer.id, retried.body.transfer.id, 'and is replayed from then on');
});

test('a claim still held makes its twin wait; once its lock runs out unrenewed, the twin takes over', async (t) => {
  const key = `claim-${randomUUID()}`;
  t.is((await create(key)).status, 201);
  await abandon(key, sql.fragment`now() + interval '2 seconds'`);
  const started = Date.now();
  const retried = await create(key);
  t.is(retried.status, 201, retried.text);
  t.true(Date.now() - started >= 1_500, `waited for the holder (${Date.now() - started} ms)`);
});

test('a claim from before claims had locks is abandoned once older than a lock', async (t) => {
  const key = `claim-${randomUUID()}`;
  t.is((await create(key)).status, 201);
  await abandon(key, sql.fragment`NULL`, null);
  await api.services.db.query(sql.typeAlias('void')`
    UPDATE idempotency_records SET created_at = now() - interval '1 minute'
    WHERE workspace_id = ${ws.workspace_id} AND idempotency_key = ${key}`);
  t.is((await create(key)).status, 201);
});

test('a different request with the key of an abandoned claim is still a conflict', async (t) => {
  const key = `claim-${randomUUID()}`;
  t.is((await create(key)).status, 201);
  await abandon(key, sql.fragment`now() - interval '1 second'`);
  const other = await api.call('POST', '/v1/transfers', {
    key: ws.keys.live,
    headers: { 'idempotency-key': key },
    body: { files: [{ name: 'other.bin', size: 11 }] },
  });
  t.is(other.status, 409);
  t.is(other.body.error.code, 'idempotency_conflict');
});

test('the late settle of a claim that was taken over leaves the new claim alone', async (t) => {
  const key = `claim-${randomUUID()}`;
  t.is((await create(key)).status, 201);
  const deadClaim = { id: randomUUID(), lockMs: 20_000 };
  await abandon(key, sql.fragment`now() - interval '1 second'`, deadClaim.id);
  const retried = await create(key);
  t.is(retried.status, 201);
  // The dead request's process comes back to settle its claim: a release and a completion, both too late.
  const owner = { workspaceId: ws.workspace_id, environment: 'live' as const, keyKind: 'api_key' as const, keyId: '' };
  owner.keyId = await api.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
    SELECT api_key_id::text AS id FROM idempotency_records WHERE workspace_id = ${ws.workspace_id} AND idempotency_key = ${key}`);
  const records = createIdempotencyQueries(api.services.db);
  await records.release(owner, key, deadClaim);
  await records.complete(owner, key, deadClaim, 500, 'not a sealed body');
  const replay = await create(key);
  t.is(replay.status, 201);
  t.is(replay.body.transfer.id, retried.body.transfer.id, "the new claim's answer is kept");
});
