import { type AddressInfo, connect, createServer } from 'node:net';
import test from 'ava';
import { eventually, startApi, type TestApi, type TestWorkspace } from './helpers/api.ts';
import { freePort as closedPort } from './helpers/ports.ts';
import { intoFreshRateWindow } from './helpers/rate-window.ts';

// Failed authentications cost the caller: they are limited per client address
// (before any database work), collapsed in the audit log, and still limited
// when Redis is away.

async function createKey(api: TestApi, ws: TestWorkspace, body: Record<string, unknown>) {
  const response = await api.call('POST', '/v1/api-keys', { key: ws.keys.live, body: { mfa_code: ws.mfa(), ...body } });
  if (response.status !== 201) throw new Error(`key creation failed: ${response.status} ${response.text}`);
  return response.body as { id: string; key: string };
}

async function revokedKey(api: TestApi, ws: TestWorkspace, name: string) {
  const created = await createKey(api, ws, { name });
  const revoked = await api.call('DELETE', `/v1/api-keys/${created.id}`, { key: ws.keys.live });
  if (revoked.status !== 200) throw new Error(`revoke failed: ${revoked.status} ${revoked.text}`);
  return created;
}

type AuditEntry = { resource_id: string; ip_address: string; metadata: { reason: string; count?: number } };

async function authFailures(api: TestApi, ws: TestWorkspace, keyId: string): Promise<AuditEntry[]> {
  const entries = await api.call('GET', '/v1/audit?action=auth.failed&limit=500', { key: ws.keys.live });
  return (entries.body.data as AuditEntry[]).filter((e) => e.resource_id === keyId);
}

const unknownKey = () => `svc_live_${'Q'.repeat(40)}`;
const from = (ip: string) => ({ 'x-forwarded-for': ip });

test('a flood of bad keys from one address gets 429 after the budget; its keys in use and other addresses still authenticate', async (t) => {
  await intoFreshRateWindow();
  const api = await startApi({ TRUST_PROXY_HOPS: '1', RATE_LIMIT_AUTH_FAILURES: '10' });
  t.teardown(() => api.close());
  const ws = await api.workspace('Flood');
  const revoked = await revokedKey(api, ws, 'revoked');
  const attacker = from('198.51.100.20');
  // Behind the same NAT as the flood: a colleague's key in use (ws.keys.live), and one never used yet.
  const unused = await ws.mintKey({ name: 'not used yet' });

  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await api.call('GET', '/v1/me', { headers: attacker })).status);
  for (let i = 0; i < 3; i++)
    statuses.push((await api.call('GET', '/v1/me', { key: unknownKey(), headers: attacker })).status);
  for (let i = 0; i < 3; i++)
    statuses.push((await api.call('GET', '/v1/me', { key: revoked.key, headers: attacker })).status);
  t.deepEqual(statuses, [401, 401, 401, 401, 401, 401, 401, 401, 401, 401]);

  const refused = await api.call('GET', '/v1/me', { key: unknownKey(), headers: attacker });
  t.is(refused.status, 429, refused.text);
  t.is(refused.body.error.code, 'rate_limited');
  const retryAfter = Number(refused.headers.get('retry-after'));
  t.true(retryAfter >= 1 && retryAfter <= 60, String(retryAfter));
  // Refused before the key is looked up: a known key's failure is no longer even recorded.
  t.is((await api.call('GET', '/v1/me', { key: revoked.key, headers: attacker })).status, 429);
  // A good key this server holds costs no database work: the people behind the same NAT as the
  // flood keep working. (Any key changed in the database empties every cache, other tests' keys
  // included: the key is used from elsewhere just before, and again if a change came in between.)
  await eventually(async () => {
    await api.call('GET', '/v1/me', { key: ws.keys.live, headers: from('198.51.100.22') });
    const answer = await api.call('GET', '/v1/me', { key: ws.keys.live, headers: attacker });
    return answer.status === 200 ? true : undefined;
  }, 5_000);
  // A key it would have to look up waits for the window's end, good or not.
  t.is((await api.call('GET', '/v1/me', { key: unused.key, headers: attacker })).status, 429);

  const neighbour = from('198.51.100.21');
  t.is((await api.call('GET', '/v1/me', { key: ws.keys.live, headers: neighbour })).status, 200);
  t.is((await api.call('GET', '/v1/me', { key: unknownKey(), headers: neighbour })).status, 401);

  const entries = await authFailures(api, ws, revoked.id);
  t.is(
    entries.reduce((sum, e) => sum + (e.metadata.count ?? 1), 0),
    3,
    'only the failures before the limit reached the audit log',
  );
});

test('100 failures on one known key produce a handful of audit rows whose counts add up', async (t) => {
  const api = await startApi({ TRUST_PROXY_HOPS: '1', RATE_LIMIT_AUTH_FAILURES: '1000' });
  t.teardown(() => api.close());
  const ws = await api.workspace('Collapse');
  const revoked = await revokedKey(api, ws, 'revoked');
  const office = await createKey(api, ws, { name: 'office only', allowed_ips: ['203.0.113.0/24'] });

  for (let batch = 0; batch < 10; batch++) {
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () =>
        api.call('GET', '/v1/me', { key: revoked.key, headers: from('198.51.100.30') }).then((r) => r.status),
      ),
    );
    t.deepEqual(new Set(statuses), new Set([401]));
  }
  for (let i = 0; i < 7; i++) {
    t.is((await api.call('GET', '/v1/me', { key: revoked.key, headers: from('198.51.100.31') })).status, 401);
  }
  for (let i = 0; i < 5; i++) {
    t.is((await api.call('GET', '/v1/me', { key: office.key, headers: from('198.51.100.30') })).status, 403);
  }

  const entries = await authFailures(api, ws, revoked.id);
  t.true(entries.length <= 4, `${entries.length} audit rows for 107 failures`);
  const first = entries.filter((e) => e.ip_address === '198.51.100.30');
  const second = entries.filter((e) => e.ip_address === '198.51.100.31');
  // One row per key, reason, address and hour: two if the run straddles an hour.
  t.true(first.length >= 1 && first.length <= 2, `${first.length} rows`);
  t.true(second.length >= 1 && second.length <= 2, `${second.length} rows`);
  t.is(
    first.reduce((sum, e) => sum + (e.metadata.count ?? 1), 0),
    100,
  );
  t.is(
    second.reduce((sum, e) => sum + (e.metadata.count ?? 1), 0),
    7,
  );
  t.true(entries.every((e) => e.metadata.reason === 'revoked'));
  const ipRows = await authFailures(api, ws, office.id);
  t.true(ipRows.length >= 1 && ipRows.length <= 2);
  t.true(ipRows.every((e) => e.metadata.reason === 'ip_not_allowed'));
  t.is(
    ipRows.reduce((sum, e) => sum + (e.metadata.count ?? 1), 0),
    5,
  );
});

test('with Redis unreachable, requests past each budget are still refused and the limiter reports degraded', async (t) => {
  await intoFreshRateWindow();
  const port = await closedPort();
  const api = await startApi({
    REDIS_URL: `redis://127.0.0.1:${port}/0`,
    RATE_LIMIT_READ: '3',
    RATE_LIMIT_PUBLIC: '2',
    RATE_LIMIT_AUTH_FAILURES: '2',
  });
  t.teardown(() => api.close());
  const ws = await api.workspace('No Redis');

  const reads: number[] = [];
  for (let i = 0; i < 4; i++) reads.push((await api.call('GET', '/v1/me', { key: ws.keys.live })).status);
  t.deepEqual(reads, [200, 200, 200, 429]);
  const publicCalls: number[] = [];
  for (let i = 0; i < 3; i++) publicCalls.push((await api.call('GET', '/v1/welcome')).status);
  t.deepEqual(publicCalls, [200, 200, 429]);
  const failures: number[] = [];
  for (let i = 0; i < 3; i++) failures.push((await api.call('GET', '/v1/me', { key: unknownKey() })).status);
  t.deepEqual(failures, [401, 401, 429]);

  const status = api.server.app.rateLimiter.status();
  t.is(status.status, 'degraded');
  t.is(status.store, 'memory');
});

test('/v1/health without Redis: still serving (200), redis down, the limiter degraded to memory', async (t) => {
  const port = await closedPort();
  const api = await startApi({ REDIS_URL: `redis://127.0.0.1:${port}/0` });
  t.teardown(() => api.close());
  const health = await api.call('GET', '/v1/health');
  t.is(health.status, 200, health.text);
  t.is(health.body.status, 'degraded');
  t.is(health.body.components.redis.status, 'down');
  t.deepEqual(health.body.components.rate_limiter, { status: 'degraded', store: 'memory' });
  t.is(health.body.components.database.status, 'ok');
});

test('with Redis reachable the limiter reports ok', async (t) => {
  const api = await startApi();
  t.teardown(() => api.close());
  const ws = await api.workspace('Redis');
  t.is((await api.call('GET', '/v1/me', { key: ws.keys.live })).status, 200);
  t.deepEqual(api.server.app.rateLimiter.status(), { status: 'ok', store: 'redis' });
  const health = await api.call('GET', '/v1/health');
  t.deepEqual(health.body.components.rate_limiter, { status: 'ok', store: 'redis' });
});

test('an API whose Redis connection is slow to open waits for it, and does not start degraded', async (t) => {
  // A proxy that holds each connection to Redis for longer than the limiter waits for a command
  // (500 ms): an API that served before its connection was up counted in memory and said degraded.
  const redis = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
  const proxy = createServer((client) => {
    client.pause();
    const timer = setTimeout(() => {
      const upstream = connect(Number(redis.port || 6379), redis.hostname, () => {
        client.pipe(upstream).pipe(client);
        client.resume();
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    }, 800);
    client.on('close', () => clearTimeout(timer));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
  const { port } = proxy.address() as AddressInfo;
  const api = await startApi({ REDIS_URL: `redis://127.0.0.1:${port}${redis.pathname}` });
  t.teardown(() => api.close());
  const health = await api.call('GET', '/v1/health');
  t.is(health.body.status, 'ok', health.text);
  t.deepEqual(health.body.components.rate_limiter, { status: 'ok', store: 'redis' });
});
