import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import test from 'ava';
import { APPLICATION_NAME } from '../lib/api-keys/credential-cache.ts';
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
    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE application_name = ${APPLICATION_NAME} AND datname = current_database()`);
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
      SELECT count(*)::int FROM pg_stat_activity
      WHERE application_name = ${APPLICATION_NAME} AND datname = current_database()`);
    return Number(listeners) >= 2 ? cachedEverywhere() : undefined;
  }, 10_000);
  await a.services.db.query(sql.unsafe`UPDATE api_keys SET is_active = false WHERE id = ${next.id}`);
  t.true((await refusedWithin(b, next.key, 'revoked_api_key')) < 1_000);
});

/**
 * A loopback proxy in front of PostgreSQL that can black-hole the LISTEN connections passing
 * through it: their bytes are dropped both ways and the sockets stay open, as behind a NAT that
 * forgot the connection. The proxy tells them from the others by the LISTEN in their plain-text
 * protocol.
 */
async function listenBlackHole() {
  const target = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/valise');
  let holing = false;
  const listeners = new Set<{ client: Socket; upstream: Socket; silenced: boolean }>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    const pair = { client, upstream, silenced: false };
    client.on('data', (data: Buffer) => {
      if (!listeners.has(pair) && data.includes('LISTEN valise_api_keys_changed')) {
        listeners.add(pair);
        if (holing) pair.silenced = true;
      }
      if (!pair.silenced) upstream.write(data);
    });
    upstream.on('data', (data: Buffer) => {
      if (!pair.silenced) client.write(data);
    });
    const close = () => {
      listeners.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(target);
  proxied.port = String((server.address() as AddressInfo).port);
  return {
    url: proxied.toString(),
    /** LISTEN connections still passing bytes. */
    live: () => [...listeners].filter((pair) => !pair.silenced).length,
    blackHole() {
      holing = true;
      for (const pair of listeners) pair.silenced = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of listeners) pair.client.destroy();
        server.close(() => resolve());
      }),
  };
}

// Serial: ava runs it before the others, one of which cuts every LISTEN connection of the database.
test.serial(
  'a server whose LISTEN connection goes silent without closing stops serving cached keys within seconds',
  async (t) => {
    const proxy = await listenBlackHole();
    t.teardown(() => proxy.close());
    const c = await startApi({ DATABASE_URL: proxy.url });
    t.teardown(() => c.close());
    await eventually(async () => (proxy.live() === 1 ? true : undefined), 5_000, 20);
    const made = await a.call('POST', '/v1/api-keys', {
      key: ws.keys.live,
      body: { name: 'behind a NAT', key_type: 'restricted', scopes: ['transfers:read'] },
    });
    t.is(made.status, 201, made.text);
    for (let i = 0; i < 2; i++) t.is((await me(c, made.body.key)).status, 200);

    // The connection is now dead in all but name: no error, no end, no notification.
    proxy.blackHole();
    await a.services.db.query(
      sql.unsafe`UPDATE api_keys SET revoked_at = ms_now(), is_active = false WHERE id = ${made.body.id}`,
    );
    const start = Date.now();
    await eventually(
      async () => {
        const answer = await me(c, made.body.key);
        return answer.status === 401 && answer.body.error.code === 'revoked_api_key' ? true : undefined;
      },
      15_000,
      50,
    );
    const refusedAfter = Date.now() - start;
    t.log(`refused after ${refusedAfter} ms`);
    // Served from the cache for at most 3 s after its last answered heartbeat (lib/api-keys/credential-cache.ts).
    t.true(refusedAfter < 5_000, `refused after ${refusedAfter} ms`);
    // A key still valid keeps working, looked up in the database, while the connection is replaced.
    t.is((await me(c, ws.keys.live)).status, 200);
  },
);
