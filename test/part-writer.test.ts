import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import test from 'ava';
import { PartWriter } from '../lib/uploads/part-writer.ts';
import type { Part } from '../lib/uploads/parts.ts';

// The part writer's promises to the upload pipeline (lib/uploads/receive.ts): parts are stored
// several at once, but recorded in order, so the recorded offset is always a prefix of the file.

const parts = (count: number, size: number): Part[] =>
  Array.from({ length: count }, (_, index) => ({
    number: index + 1,
    plainStart: index * size,
    plainEnd: (index + 1) * size,
    blobBytes: size,
  }));

const bytes = (length: number) => Readable.from([Buffer.alloc(length, 7)], { objectMode: false });

test('parts stored out of order are committed in order, with at most `storing` + 1 stored at once', async (t) => {
  const committed: number[] = [];
  let storing = 0;
  let most = 0;
  // Earlier parts take longer: part 1 finishes last.
  const writer = new PartWriter(
    parts(4, 10),
    {
      store: async (part, body) => {
        storing++;
        most = Math.max(most, storing);
        await delay(40 - part.number * 10);
        storing--;
        return Buffer.isBuffer(body) ? body.length : 0;
      },
      commit: async (part, length) => {
        t.is(length, 10);
        committed.push(part.number);
      },
    },
    { storing: 2 },
  );
  await pipeline(bytes(40), writer);
  t.deepEqual(committed, [1, 2, 3, 4]);
  t.is(most, 3);
});

test('a part that cannot be stored fails the upload, and nothing after it is committed', async (t) => {
  const committed: number[] = [];
  const writer = new PartWriter(
    parts(5, 10),
    {
      store: async (part) => {
        await delay(part.number === 2 ? 20 : 1);
        if (part.number === 2) throw new Error('the object store refused part 2');
        return part.number;
      },
      commit: async (part) => {
        committed.push(part.number);
      },
    },
    { storing: 2 },
  );
  const slowly = Readable.from(
    (async function* () {
      for (let i = 0; i < 5; i++) {
        yield Buffer.alloc(10, i);
        await delay(5);
      }
    })(),
  );
  await t.throwsAsync(pipeline(slowly, writer), { message: 'the object store refused part 2' });
  await delay(50);
  t.deepEqual(committed, [1], 'the recorded prefix ends where the failed part starts');
});

test('with storing 0 the parts take turns, and a short or long body is refused', async (t) => {
  const order: string[] = [];
  const sink = {
    store: async (part: Part) => {
      order.push(`store ${part.number}`);
      return part.number;
    },
    commit: async (part: Part) => {
      order.push(`commit ${part.number}`);
    },
  };
  await pipeline(bytes(20), new PartWriter(parts(2, 10), sink, { storing: 0 }));
  t.deepEqual(order, ['store 1', 'commit 1', 'store 2', 'commit 2']);
  await t.throwsAsync(pipeline(bytes(15), new PartWriter(parts(2, 10), sink, { storing: 2 })), {
    message: /ended early/,
  });
  await t.throwsAsync(pipeline(bytes(25), new PartWriter(parts(2, 10), sink, { storing: 2 })), {
    message: /longer than declared/,
  });
});

test('a body cut while a part is being stored: settled() waits until that part is committed', async (t) => {
  const committed: number[] = [];
  const writer = new PartWriter(
    parts(3, 10),
    {
      store: async (part) => {
        await delay(50);
        return part.number;
      },
      commit: async (part) => {
        committed.push(part.number);
      },
    },
    { storing: 2 },
  );
  const cut = Readable.from(
    (async function* () {
      yield Buffer.alloc(15, 1);
      await delay(5);
      throw new Error('connection reset');
    })(),
  );
  await t.throwsAsync(pipeline(cut, writer), { message: 'connection reset' });
  t.deepEqual(committed, [], 'the first part was still being stored when the body failed');
  await writer.settled();
  t.deepEqual(committed, [1], 'what was stored is recorded before the request gives up its lease');
});

/** A sink that reads streamed parts to their end, as the object store does, noting when each began. */
function streamingSink(committed: number[], events: string[]) {
  return {
    store: async (part: Part, body: Buffer | Readable) => {
      if (Buffer.isBuffer(body)) throw new Error(`part ${part.number} was buffered`);
      events.push(`store ${part.number}`);
      let length = 0;
      for await (const chunk of body) length += (chunk as Buffer).length;
      if (length !== part.blobBytes) throw new Error(`part ${part.number}: ${length} bytes`);
      return length;
    },
    commit: async (part: Part) => {
      committed.push(part.number);
    },
  };
}

test('parts above bufferedPartMax are streamed to the store as their bytes arrive, and committed in order', async (t) => {
  const committed: number[] = [];
  const events: string[] = [];
  const writer = new PartWriter(parts(3, 10), streamingSink(committed, events), { storing: 1, bufferedPartMax: 9 });
  const trickle = Readable.from(
    (async function* () {
      for (let i = 0; i < 6; i++) {
        events.push(`chunk ${i}`);
        yield Buffer.alloc(5, i);
        await delay(5);
      }
    })(),
  );
  await pipeline(trickle, writer);
  t.deepEqual(committed, [1, 2, 3]);
  t.deepEqual(events.slice(0, 2), ['chunk 0', 'store 1'], 'the first part is being stored after its first bytes');
});

test('a body cut inside a streamed part aborts that part: only the parts before it are committed', async (t) => {
  const committed: number[] = [];
  const aborted: string[] = [];
  const sink = streamingSink(committed, []);
  const writer = new PartWriter(
    parts(3, 10),
    {
      store: (part: Part, body: Buffer | Readable) =>
        sink.store(part, body).catch((error: Error) => {
          aborted.push(`part ${part.number}: ${error.message}`);
          throw error;
        }),
      commit: sink.commit,
    },
    { storing: 2, bufferedPartMax: 9 },
  );
  const cut = Readable.from(
    (async function* () {
      yield Buffer.alloc(14, 1);
      await delay(10);
      throw new Error('connection reset');
    })(),
  );
  await t.throwsAsync(pipeline(cut, writer), { message: 'connection reset' });
  await writer.settled();
  t.deepEqual(committed, [1]);
  t.deepEqual(aborted, ['part 2: Premature close']);
});

test('a body that ends inside a streamed part is refused, and that part is aborted', async (t) => {
  const committed: number[] = [];
  const writer = new PartWriter(parts(2, 10), streamingSink(committed, []), { storing: 2, bufferedPartMax: 9 });
  await t.throwsAsync(pipeline(bytes(15), writer), { message: /ended early/ });
  await writer.settled();
  t.deepEqual(committed, [1]);
});
