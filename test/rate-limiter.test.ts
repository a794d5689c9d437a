import { randomUUID } from 'node:crypto';
import test from 'ava';
import { Redis } from 'ioredis';
import { RateLimiter } from '../api/rate-limiter.ts';
import { loadConfig } from '../lib/config.ts';

// The rate limiter against the real Redis: the requests of one turn of the event loop are counted
// in one write (api/rate-limiter.ts), and each still gets a count of its own.

const config = loadConfig();

/** How many scripts Redis has run (EVAL and EVALSHA), from its command statistics. */
async function scriptsRun(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats');
  return [...stats.matchAll(/^cmdstat_(?:eval|evalsha):calls=(\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

function limiter(t: { teardown: (fn: () => void) => void }) {
  const redis = new Redis(config.redis.url, { maxRetriesPerRequest: 1 });
  t.teardown(() => redis.disconnect());
  const warnings: string[] = [];
  const prefix = `test-${randomUUID()}:`;
  return { redis, warnings, prefix, limiter: new RateLimiter(redis, prefix, (m) => warnings.push(m)) };
}

test('requests of one turn are counted in one write, each with a count of its own, allowed up to the limit', async (t) => {
  const { redis, limiter: rates, warnings } = limiter(t);
  const observer = new Redis(config.redis.url);
  t.teardown(() => observer.disconnect());
  await redis.ping();
  // Once, so that the script is loaded on the connection: what follows is the steady state.
  await rates.take('warm-up', 10);

  const before = await scriptsRun(observer);
  const decisions = await Promise.all(Array.from({ length: 50 }, () => rates.take('bucket-a', 30)));
  const after = await scriptsRun(observer);
  // Others' tests use this Redis too: at most a few of their scripts ran meanwhile, never 50.
  t.true(after - before < 10, `${after - before} scripts for 50 requests`);
  t.deepEqual(
    decisions.map((d) => d.remaining),
    Array.from({ length: 50 }, (_, i) => Math.max(0, 30 - (i + 1))),
  );
  t.deepEqual(
    decisions.map((d) => d.allowed),
    Array.from({ length: 50 }, (_, i) => i < 30),
  );
  // The next turn goes on from the total.
  t.is((await rates.take('bucket-a', 30)).remaining, 0);
  t.is((await rates.peek('bucket-a', 100)).remaining, 100 - 51);
  t.deepEqual(warnings, []);
});

test('buckets counted in the same turn stay apart, and a new window starts from nothing with its expiry set', async (t) => {
  const { redis, limiter: rates, prefix } = limiter(t);
  await redis.ping();
  const [a, b, c] = await Promise.all([rates.take('one', 5), rates.take('two', 5), rates.take('one', 5)]);
  t.deepEqual(
    [a, b, c].map((d) => d?.remaining),
    [4, 4, 3],
  );
  const ours = await redis.keys(`${prefix}rl:two:*`);
  t.is(ours.length, 1);
  for (const key of ours) {
    const ttl = await redis.ttl(key);
    t.true(ttl > 0 && ttl <= 65, `ttl ${ttl}`);
  }
});

test('Redis refusing the script: every request of the turn is counted in process instead, never let through uncounted', async (t) => {
  const { redis, limiter: rates, warnings, prefix } = limiter(t);
  await redis.ping();
  // Not in a window's last seconds: the key set below must be the one the takes use.
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoWindow));
  // A key that holds no number makes INCRBY fail inside the script, for this bucket alone.
  const window = Math.floor(Date.now() / 1000 / 60);
  await redis.set(`${prefix}rl:broken:${window}`, 'not a number');
  t.teardown(() => void redis.del(`${prefix}rl:broken:${window}`));
  const decisions = await Promise.all([rates.take('broken', 2), rates.take('broken', 2), rates.take('broken', 2)]);
  t.deepEqual(
    decisions.map((d) => d.allowed),
    [true, true, false],
  );
  t.true(warnings.some((w) => w.includes('rate limiter degraded')));
});
