import { randomBytes } from 'node:crypto';
import test from 'ava';
import type { DatabasePool } from 'slonik';
import { loadConfig } from '../lib/config.ts';
import { deriveKey } from '../lib/crypto/secrets.ts';
import { createDatabasePool } from '../lib/db/pool.ts';
import { sql } from '../lib/db/sql.ts';
import { bootstrapWorkspace } from '../lib/workspaces/bootstrap.ts';
import { eventually } from './helpers/api.ts';
import { type ApiProcess, type RunningProcess, startApiProcess, startBalancer } from './helpers/api-processes.ts';
import { intoFreshRateWindow } from './helpers/rate-window.ts';

// Two API processes on one database and one Redis, as scripts/scale.sh runs them, and haproxy in
// front of them: what one process decides, the other holds to (docs/operations.md). A key revoked
// through one is refused by the other within the documented bound (docs/api-keys.md), budgets are
// shared, an Idempotency-Key is one record whichever process it reaches, and the balancer passes
// the client's address on so that per-address limits still count per client.

/** docs/api-keys.md: another process refuses a changed key within this, once the change has committed. */
const CROSS_PROCESS_BOUND_MS = 1_000;
const READ_BUDGET = 40;
const FAILURE_BUDGET = 6;

let a: ApiProcess;
let b: ApiProcess;
let balancer: RunningProcess;
let db: DatabasePool;
const config = loadConfig();

test.before(async () => {
  const env = {
    // A Redis space of this file's own: its budgets start from nothing.
    REDIS_PREFIX: `valise-test:${randomBytes(6).toString('hex')}:`,
    // The socket peer is the balancer or this test, both on loopback: one trusted hop.
    TRUST_PROXY_HOPS: '1',
    TRUSTED_PROXIES: '127.0.0.1,::1',
    RATE_LIMIT_READ: String(READ_BUDGET),
    RATE_LIMIT_AUTH_FAILURES: String(FAILURE_BUDGET),
  };
  [a, b] = await Promise.all([startApiProcess(env), startApiProcess(env)]);
  balancer = await startBalancer([a, b]);
  db = await createDatabasePool(config.database.url, 2);
});
test.after.always(async () => {
  await balancer?.stop();
  await Promise.all([a?.stop(), b?.stop()]);
  await db?.end();
});

async function workspace(name: string) {
  return bootstrapWorkspace(
    db,
    { apiKeyPepper: deriveKey(config.secret, 'api-key-hash'), seal: deriveKey(config.secret, 'seal') },
    { workspaceName: name, ownerEmail: `owner-${randomBytes(4).toString('hex')}@example.com` },
  );
}

/** Each test calls from addresses of its own: failures of one never spend another's budget. */
let addresses = 0;
const nextAddress = () => `192.0.2.${++addresses}`;

const me = (api: ApiProcess, key: string, ip: string) =>
  api.call('GET', '/v1/me', { key, headers: { 'x-forwarded-for': ip } });

/** A restricted key, used twice on each process so that both hold it in their credential cache. */
async function keyCachedOnBoth(owner: string, name: string, ip: string) {
  const made = await a.call('POST', '/v1/api-keys', {
    key: owner,
    body: { name, key_type: 'restricted', scopes: ['transfers:read'] },
  });
  if (made.status !== 201) throw new Error(made.text);
  for (const api of [a, b, a, b]) if ((await me(api, made.body.key, ip)).status !== 200) throw new Error('key refused');
  return made.body as { id: string; key: string };
}

test.serial(
  'a key revoked through one process is refused there at once and by the other within the bound',
  async (t) => {
    const ws = await workspace('Revocation across processes');
    const ip = nextAddress();
    const key = await keyCachedOnBoth(ws.keys.live, 'revoked across', ip);

    const revoked = await a.call('DELETE', `/v1/api-keys/${key.id}`, { key: ws.keys.live });
    t.is(revoked.status, 200, revoked.text);
    const answeredAt = Date.now();
    const here = await me(a, key.key, ip);
    t.is(here.status, 401, 'the revoking process refuses the very next request');
    t.is(here.body.error.code, 'revoked_api_key');

    const refusedAfter = await eventually(
      async () => {
        const there = await me(b, key.key, ip);
        if (there.status === 200) return undefined;
        t.is(there.status, 401, there.text);
        t.is(there.body.error.code, 'revoked_api_key');
        return Date.now() - answeredAt;
      },
      5_000,
      5,
    );
    t.log(`the other process refused the key ${refusedAfter} ms after the revocation was answered`);
    t.true(refusedAfter <= CROSS_PROCESS_BOUND_MS, `${refusedAfter} ms`);
    // And it stays refused on both: no stale row comes back.
    for (const api of [a, b, a, b]) t.is((await me(api, key.key, ip)).status, 401);
  },
);

test.serial('a change made in the database, by no API process, is refused by both within the bound', async (t) => {
  const ws = await workspace('Database change');
  const ip = nextAddress();
  const key = await keyCachedOnBoth(ws.keys.live, 'deactivated in SQL', ip);
  await db.query(sql.unsafe`UPDATE api_keys SET is_active = false WHERE id = ${key.id}`);
  const changedAt = Date.now();
  for (const api of [a, b]) {
    const after = await eventually(
      async () => ((await me(api, key.key, ip)).status === 401 ? Date.now() - changedAt : undefined),
      5_000,
      5,
    );
    t.true(after <= CROSS_PROCESS_BOUND_MS, `${after} ms`);
  }
});

test.serial('GET /v1/me names the workspace as it is now on both processes, after a rename neither made', async (t) => {
  const ws = await workspace('Before the rename');
  const ip = nextAddress();
  for (const api of [a, b, a, b]) t.is((await me(api, ws.keys.live, ip)).body.workspace.name, 'Before the rename');
  await db.query(sql.unsafe`UPDATE workspaces SET name = 'After the rename' WHERE id = ${ws.workspace_id}`);
  for (const api of [a, b]) {
    await eventually(
      async () => ((await me(api, ws.keys.live, ip)).body.workspace.name === 'After the rename' ? true : undefined),
      CROSS_PROCESS_BOUND_MS,
      5,
    );
  }
  t.pass();
});

test.serial('a workspace read budget is one budget across both processes', async (t) => {
  await intoFreshRateWindow();
  const ws = await workspace('Shared budget');
  const ip = nextAddress();
  const statuses: number[] = [];
  const remaining: number[] = [];
  for (let i = 0; i < READ_BUDGET + 2; i++) {
    const answer = await me(i % 2 === 0 ? a : b, ws.keys.live, ip);
    statuses.push(answer.status);
    if (answer.status === 200) remaining.push(Number(answer.headers.get('x-ratelimit-remaining')));
  }
  t.deepEqual(statuses.slice(0, READ_BUDGET), Array(READ_BUDGET).fill(200));
  t.deepEqual(statuses.slice(READ_BUDGET), [429, 429]);
  t.deepEqual(
    remaining,
    Array.from({ length: READ_BUDGET }, (_, i) => READ_BUDGET - 1 - i),
    'each process counts down from where the other left off',
  );
});

test.serial(
  'an address past its failure budget is refused by both processes, except with a good cached key',
  async (t) => {
    await intoFreshRateWindow();
    const ws = await workspace('Failure budget');
    const attacker = '198.51.100.40';
    // The good key is in both caches: its requests need no lookup, and are screened with the rate draw.
    for (const api of [a, b]) t.is((await me(api, ws.keys.live, nextAddress())).status, 200);
    const bad = `svc_live_${'Q'.repeat(40)}`;
    const statuses: number[] = [];
    for (let i = 0; i < FAILURE_BUDGET; i++) statuses.push((await me(i % 2 === 0 ? a : b, bad, attacker)).status);
    t.deepEqual(statuses, Array(FAILURE_BUDGET).fill(401));
    for (const api of [a, b]) {
      const refused = await me(api, bad, attacker);
      t.is(refused.status, 429, refused.text);
      t.regex(refused.body.error.message, /failed authentications/);
      // The people behind the attacker's NAT keep working with the keys they use (used from
      // elsewhere just before: a key changed by another test empties the caches).
      await eventually(async () => {
        await me(api, ws.keys.live, nextAddress());
        return (await me(api, ws.keys.live, attacker)).status === 200 ? true : undefined;
      }, 5_000);
    }
    t.is((await me(b, ws.keys.live, '198.51.100.41')).status, 200, 'a neighbour is not blocked');
  },
);

test.serial(
  'an Idempotency-Key sent to one process and then the other creates once and replays the first answer',
  async (t) => {
    const ws = await workspace('Idempotency across processes');
    const send = (api: ApiProcess, idempotencyKey: string) =>
      api.call('POST', '/v1/api-keys', {
        key: ws.keys.live,
        headers: { 'idempotency-key': idempotencyKey },
        body: { name: `idem ${idempotencyKey}`, key_type: 'restricted', scopes: ['transfers:read'] },
      });
    const first = await send(a, 'scale-idem-sequential');
    t.is(first.status, 201, first.text);
    const second = await send(b, 'scale-idem-sequential');
    t.is(second.status, 201, second.text);
    t.is(second.headers.get('x-service-idempotent-replay'), 'true');
    t.deepEqual(second.body, first.body);

    // At the same moment on both: one runs, the other waits for it and replays.
    const [one, two] = await Promise.all([send(a, 'scale-idem-concurrent'), send(b, 'scale-idem-concurrent')]);
    t.is(one.status, 201, one.text);
    t.is(two.status, 201, two.text);
    t.is(one.body.id, two.body.id);
    const named = await db.oneFirst(sql.unsafe`
    SELECT count(*)::int FROM api_keys WHERE workspace_id = ${ws.workspace_id} AND name LIKE 'idem %'`);
    t.is(Number(named), 2, 'two keys: one per Idempotency-Key');
  },
);

test.serial('through the balancer, the client address is the one haproxy saw, not what the client wrote', async (t) => {
  await intoFreshRateWindow();
  const ws = await workspace('Behind the balancer');
  const through = (key: string, forged: string) =>
    fetch(`${balancer.url}/v1/me`, { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': forged } });
  const loopbackOnly = await a.call('POST', '/v1/api-keys', {
    key: ws.keys.live,
    body: { name: 'loopback only', key_type: 'restricted', scopes: ['transfers:read'], allowed_ips: ['127.0.0.1'] },
  });
  t.is(loopbackOnly.status, 201, loopbackOnly.text);
  // This client is 127.0.0.1 whatever it claims to be…
  for (let i = 0; i < 4; i++) t.is((await through(loopbackOnly.body.key, '203.0.113.7')).status, 200);
  // …while a process believes its one trusted hop, here this test claiming 203.0.113.7.
  t.is((await me(a, loopbackOnly.body.key, '203.0.113.7')).status, 403);

  // Each failure claims another address; all of them count as 127.0.0.1's. This blocks 127.0.0.1
  // for the rest of the minute: the last test of the file.
  const bad = `svc_live_${'Z'.repeat(40)}`;
  for (let i = 0; i < FAILURE_BUDGET; i++) t.is((await through(bad, `203.0.113.${i + 1}`)).status, 401);
  // (A key the process holds would pass a blocked address: one it must look up shows the block.)
  const refused = await through(bad, '203.0.113.200');
  t.is(refused.status, 429, 'the forged addresses did not escape the budget of 127.0.0.1');
  t.is((await me(b, ws.keys.live, nextAddress())).status, 200, 'another address is not blocked');
});
