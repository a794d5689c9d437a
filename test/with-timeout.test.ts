import test from 'ava';
import { Redis } from 'ioredis';
import { loadConfig } from '../lib/config.ts';
import { withTimeout } from '../lib/with-timeout.ts';

// The time limit around a dependency's answer (the rate limiter's Redis calls): it measures the
// dependency, not a stall of this process.

test("Redis's answer that came back while this process was stalled past the limit still wins", async (t) => {
  const redis = new Redis(loadConfig().redis.url, { maxRetriesPerRequest: 1 });
  t.teardown(() => redis.disconnect());
  t.is(await redis.ping(), 'PONG');
  const answer = withTimeout(redis.ping(), 100);
  // Redis answers within a millisecond, while this process is busy for three times the limit.
  const until = Date.now() + 300;
  while (Date.now() < until);
  t.is(await answer, 'PONG');
});

test('no answer within the limit is a rejection', async (t) => {
  await t.throwsAsync(withTimeout(new Promise(() => undefined), 50), { message: 'no answer within 50 ms' });
});
