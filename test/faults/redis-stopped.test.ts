import { randomUUID } from 'node:crypto';
import test from 'ava';
import { type ApiResponse, eventually, startApi } from '../helpers/api.ts';
import { startPrivateRedis } from '../helpers/private-services.ts';
import { intoFreshRateWindow } from '../helpers/rate-window.ts';

// Redis stopped (issue #26), as docs/conventions.md ("Rate limits") documents it: the service
// keeps serving; the limiter does not open but counts in the process with the same budgets, and
// says so (health: `rate_limiter` degraded, store `memory`); Idempotency-Key keeps working (its
// records are in PostgreSQL); and once Redis is back, counting is shared again by itself.

const READ_BUDGET = 40;

test('Redis stopped: requests are served, budgets still hold (in the process), idempotency works, and Redis is taken back by itself', async (t) => {
  const redis = await startPrivateRedis();
  t.teardown(() => redis.remove());
  const api = await startApi({
    REDIS_URL: redis.url,
    TEMPORAL_TASK_QUEUE: `fault-${randomUUID()}`,
    RATE_LIMIT_READ: String(READ_BUDGET),
  });
  t.teardown(() => api.close());
  const ws = await api.workspace('Redis stopped');
  const other = await api.workspace('Redis stopped, another workspace');
  const health = async () => (await api.call('GET', '/v1/health')).body;
  t.like(await health(), { components: { redis: { status: 'ok' }, rate_limiter: { status: 'ok', store: 'redis' } } });

  await redis.stop();
  t.log('injected: Redis stopped (SIGTERM, by pid)');
  const degraded = await eventually(async () => {
    const report = await health();
    return report.components?.rate_limiter?.store === 'memory' ? report : undefined;
  }, 15_000);
  t.like(degraded, {
    status: 'degraded',
    components: { redis: { status: 'down' }, rate_limiter: { status: 'degraded' } },
  });

  // Reads go on, and the read budget still holds: counted in the process, 429 past it.
  await intoFreshRateWindow();
  const answers: ApiResponse[] = [];
  for (let i = 0; i < READ_BUDGET + 5; i++)
    answers.push(await api.call('GET', '/v1/transfers?limit=1', { key: ws.keys.live }));
  const statuses = answers.map((answer) => answer.status);
  t.false(
    statuses.some((status) => status >= 500),
    statuses.join(','),
  );
  t.true(statuses.filter((status) => status === 200).length >= 1);
  const limited = answers.find((answer) => answer.status === 429);
  t.truthy(limited, 'past the budget, 429 as with Redis');
  t.like(limited?.body.error, { code: 'rate_limited' });
  t.truthy(limited?.headers.get('retry-after'));
  // Another workspace has its own budget, in memory too.
  t.is((await api.call('GET', '/v1/transfers?limit=1', { key: other.keys.live })).status, 200);

  // Idempotency-Key: a creation replayed with its key answers the same transfer, once.
  const headers = { 'idempotency-key': `redis-down-${randomUUID()}` };
  const body = { files: [{ name: 'redis.bin', size: 4 }] };
  const created = await api.call('POST', '/v1/transfers', { key: other.keys.live, headers, body });
  t.is(created.status, 201, created.text);
  const replayed = await api.call('POST', '/v1/transfers', { key: other.keys.live, headers, body });
  t.is(replayed.status, 201);
  t.is(replayed.headers.get('x-service-idempotent-replay'), 'true');
  t.is(replayed.body.transfer.id, created.body.transfer.id);

  await redis.start();
  t.log('injected: Redis started again');
  const back = await eventually(async () => {
    // The limiter tries Redis again on its next call.
    await api.call('GET', '/v1/transfers?limit=1', { key: other.keys.live });
    const report = await health();
    return report.components?.rate_limiter?.store === 'redis' ? report : undefined;
  }, 30_000);
  t.like(back, { components: { redis: { status: 'ok' }, rate_limiter: { status: 'ok' } } });
  t.log(
    `checked: ${answers.length} reads without Redis (${statuses.filter((s) => s === 429).length} refused past the budget), idempotent replay, health degraded then ok`,
  );
});
