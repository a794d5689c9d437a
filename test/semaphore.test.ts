import { setTimeout as delay } from 'node:timers/promises';
import test from 'ava';
import { Semaphore } from '../lib/in-parallel.ts';

// A worker streams at most CLAMD_MAX_STREAMS files to clamd at once, and a sender posts at most
// SENDER_CONCURRENCY webhooks, through one Semaphore (lib/in-parallel.ts): the others wait, in the
// order they came, and a freed place goes to the first of them.

test('past the bound, scans wait their turn in order, and each freed place goes to the next', async (t) => {
  const slots = new Semaphore(2);
  const order: number[] = [];
  const frees = new Map<number, () => void>();
  const takes = [1, 2, 3, 4].map((n) =>
    slots.acquire().then((free) => {
      order.push(n);
      frees.set(n, free);
    }),
  );
  await delay(10);
  t.deepEqual(order, [1, 2], 'two stream at once');
  t.deepEqual(slots.usage(), { active: 2, waiting: 2 });
  frees.get(2)?.();
  await delay(10);
  t.deepEqual(order, [1, 2, 3], 'the first in line takes the freed place');
  frees.get(2)?.();
  await delay(10);
  t.deepEqual(order, [1, 2, 3], 'freeing twice frees once');
  frees.get(1)?.();
  await Promise.all(takes);
  t.deepEqual(order, [1, 2, 3, 4]);
  frees.get(3)?.();
  frees.get(4)?.();
  t.deepEqual(slots.usage(), { active: 0, waiting: 0 });
});

test('a scan waiting for its turn is told every 5 s, so its activity heartbeats', async (t) => {
  const slots = new Semaphore(1);
  const first = await slots.acquire();
  let beats = 0;
  const second = slots.acquire({ beat: () => beats++, everyMs: 5_000 });
  await delay(5_200);
  t.is(beats, 1);
  first();
  (await second)();
  await delay(5_200);
  t.is(beats, 1, 'no beat once it has its turn');
});

test('run frees the place however the task ends', async (t) => {
  const slots = new Semaphore(1);
  await t.throwsAsync(
    slots.run(() => Promise.reject(new Error('clamd went away'))),
    { message: 'clamd went away' },
  );
  t.is(await slots.run(async () => 'clean'), 'clean');
  t.deepEqual(slots.usage(), { active: 0, waiting: 0 });
});
