import test from 'ava';
import { sql } from '../lib/db/sql.ts';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';

// Two API processes' worth of servers on one database, each with its own credential cache
// (lib/api-keys/credential-cache.ts): a key that changes stops working at once in the process
// that changed it and, through PostgreSQL's notice, within moments in the other; a change made
// outside the API (a tool, a worker) counts the same.

let a: TestApi;
let b: TestApi;
let ws: TestWorkspace;
test.before(async () => {
  [a, b] = await Promise.all([startApi(), startApi()]);
  ws = await a.workspace('Credential cache');
});
test.after.always(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

const me = (api: TestApi, key: string) => api.call('GET', '/v1/me', { key });

/** A restricted key of the workspace, used once on each server so that both have it cached. */
async function cachedEverywhere(scopes = ['transfers:read']) {
  const made = await a.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: `cached ${Date.now()}`, key_type: 'restricted', scopes },
  });
  if (made.status !== 201) throw new Error(made.text);
  for (const api of [a, b])
    for (let i = 0; i < 2; i++) if ((await me(api, made.body.key)).status !== 200) throw new Error('key refused');
  return made.body as { id: string; key: string };
}

/** How long until `api` refuses `key` with `code`, polling every 10 ms. */
async function refusedWithin(api: TestApi, key: string, code: string): Promise<number> {
  const start = Date.now();
  await eventually(async () => {
    const answer = await me(api, key);
    return answer.status === 401 && answer.body.error.code === code ? true : undefined;
  }, 5_000);
  return Date.now() - start;
}

test('a key revoked through one server is refused by that server at once, and by the other within moments', async (t) => {
  const key = await cachedEverywhere();
  const revoked = await a.call('DELETE', `/v1/api-keys/${key.id}`, { key: ws.keys.live });
  t.is(revoked.status, 200);
  const here = await me(a, key.key);
  t.is(here.status, 401, 'the revoking server refuses the very next request');
  t.is(here.body.error.code, 'revoked_api_key');
  const there = await refusedWithin(b, key.key, 'revoked_api_key');
  t.true(there < 1_000, `the other server refused it after ${there} ms`);
});

test('narrowed scopes apply on both servers; a change made straight in the database too', async (t) => {
  const key = await cachedEverywhere(['transfers:read', 'webhooks:read']);
  t.is((await b.call('GET', '/v1/webhooks', { key: key.key })).status, 200);
  const narrowed = await a.call('PATCH', `/v1/api-keys/${key.id}`, {
    key: ws.keys.live,
    body: { scopes: ['transfers:read'] },
  });
  t.is(narrowed.status, 200, narrowed.text);
  await eventually(
    async () => ((await b.call('GET', '/v1/webhooks', { key: key.key })).status === 403 ? true : undefined),
    2_000,
  );

  // Neither server made this change: the database announces it.
  await a.services.db.query(sql.unsafe`UPDATE api_keys SET is_active = false WHERE id = ${key.id}`);
  for (const api of [a, b]) t.true((await refusedWithin(api, key.key, 'revoked_api_key')) < 1_000);
});

test('while a server cannot hear changes it does not cache, and it caches again once it hears them', async (t) => {
  const key = await cachedEverywhere();
  // Cut b's LISTEN connection (and a's: both listen on the same channel).
  await a.services.db.query(sql.unsafe`
    SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN valise_api_keys_changed'`);
  await new Promise((resolve) => setTimeout(resolve, 100));
  // A change nobody announces to b now (its connection is being re-opened) is still seen at once.
  await a.services.db.query(
    sql.unsafe`UPDATE api_keys SET revoked_at = ms_now(), is_active = false WHERE id = ${key.id}`,
  );
  const answer = await me(b, key.key);
  t.is(answer.status, 401);
  t.is(answer.body.error.code, 'revoked_api_key');
  // Listening again, b caches and hears changes again.
  const next = await eventually(async () => {
    const listeners = await a.services.db.oneFirst(sql.unsafe`
      SELECT count(*)::int FROM pg_stat_activity WHERE query = 'LISTEN valise_api_keys_changed'`);
    return Number(listeners) >= 2 ? cachedEverywhere() : undefined;
  }, 10_000);
  await a.services.db.query(sql.unsafe`UPDATE api_keys SET is_active = false WHERE id = ${next.id}`);
  t.true((await refusedWithin(b, next.key, 'revoked_api_key')) < 1_000);
});
