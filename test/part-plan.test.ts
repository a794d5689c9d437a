import test from 'ava';
import { DomainError } from '../lib/errors.ts';
import {
  checkPlannable,
  maxFileBytes,
  PART_PLAINTEXT,
  type Part,
  partPlan,
  partSize,
  planRefusal,
  S3_LIMITS,
  SEGMENT_SIZE,
  storedSize,
} from '../lib/uploads/parts.ts';
import { ENCRYPTION_MODES } from '../lib/vocabulary.ts';

// How a declared size is cut into S3 multipart parts (lib/uploads/parts.ts), at the edges: every
// plan must be one S3 takes (at most 10,000 parts, each but the last 5 MiB to 5 GiB, stored bytes
// included), cover the file exactly, and keep the 8 MiB parts of every file planned before larger
// files were accepted, so that uploads in flight across the deploy resume as they began.

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const TiB = 1024 * GiB;
const EIGHT_MIB_LIMIT = PART_PLAINTEXT * S3_LIMITS.maxParts;

/** Fails unless `plan` is a plan S3 accepts for a file of `size`, holding `storedSize` bytes in all. */
function assertValidPlan(t: any, plan: Part[], size: number, mode: (typeof ENCRYPTION_MODES)[number]) {
  t.true(plan.length >= 1 && plan.length <= S3_LIMITS.maxParts, `${plan.length} parts`);
  let expectedStart = 0;
  let stored = 0;
  for (const [index, part] of plan.entries()) {
    t.is(part.number, index + 1);
    t.is(part.plainStart, expectedStart, `part ${part.number} starts where the one before ended`);
    t.true(part.plainEnd > part.plainStart || size === 0);
    t.true(part.blobBytes <= S3_LIMITS.maxPartBytes, `part ${part.number} is at most 5 GiB stored`);
    if (index < plan.length - 1) {
      t.true(part.blobBytes >= S3_LIMITS.minPartBytes, `part ${part.number} is at least 5 MiB stored`);
      t.is(part.plainStart % SEGMENT_SIZE, 0, 'parts start on a segment boundary');
    }
    expectedStart = part.plainEnd;
    stored += part.blobBytes;
  }
  t.is(expectedStart, size, 'the parts cover the file');
  t.is(stored, storedSize(size, mode), 'the parts hold every stored byte');
}

/** The plan's first, second and last parts: a 5 TiB plan has 10,000 of them, checked whole only once per mode. */
const edges = (plan: Part[]) => [plan[0], plan[1], plan.at(-1)].filter((part) => part !== undefined);

for (const mode of ENCRYPTION_MODES) {
  test(`small files: 0 bytes, 1 byte and one 8 MiB part (${mode})`, (t) => {
    for (const size of [0, 1, PART_PLAINTEXT - 1, PART_PLAINTEXT]) {
      const plan = partPlan(size, mode);
      t.is(plan.length, 1);
      assertValidPlan(t, plan, size, mode);
    }
    t.is(partPlan(PART_PLAINTEXT + 1, mode).length, 2);
  });

  test(`every file of up to 10,000 parts of 8 MiB keeps its 8 MiB parts (${mode})`, (t) => {
    for (const size of [20 * GiB, 78 * GiB, EIGHT_MIB_LIMIT - 1, EIGHT_MIB_LIMIT]) {
      t.is(partSize(size), PART_PLAINTEXT, `${size} bytes`);
    }
    const plan = partPlan(EIGHT_MIB_LIMIT, mode);
    t.is(plan.length, 10_000);
    assertValidPlan(t, plan, EIGHT_MIB_LIMIT, mode);
    // What every file of 20 GiB (the largest accepted before) was cut into: part n starts at (n - 1) × 8 MiB.
    const before = partPlan(20 * GiB, mode);
    t.is(before.length, 2560);
    t.true(before.every((part, index) => part.plainStart === index * PART_PLAINTEXT));
  });

  test(`one byte past 10,000 parts of 8 MiB: the smallest part of whole segments that fits (${mode})`, (t) => {
    const size = EIGHT_MIB_LIMIT + 1;
    t.is(partSize(size), PART_PLAINTEXT + SEGMENT_SIZE);
    const plan = partPlan(size, mode);
    t.true(plan.length <= 10_000);
    assertValidPlan(t, plan, size, mode);
  });

  test(`100 GiB: 10.25 MiB parts (${mode})`, (t) => {
    const size = 100 * GiB;
    t.is(partSize(size), 164 * SEGMENT_SIZE);
    // One segment less would need more than 10,000 parts.
    t.true(Math.ceil(size / (163 * SEGMENT_SIZE)) > 10_000);
    const plan = partPlan(size, mode);
    t.is(plan.length, 9_991);
    assertValidPlan(t, plan, size, mode);
  });

  test(`the largest file S3 holds in one 5 TiB object fits in 10,000 parts; one byte more is refused (${mode})`, (t) => {
    const size = maxFileBytes(mode);
    t.is(storedSize(size, mode), 5 * TiB, 'stored, it is exactly 5 TiB');
    t.is(planRefusal(size, mode), null);
    // Server mode's largest file is 1.34 GB shorter: two segments fewer per part.
    t.is(partSize(size), (mode === 'e2e' ? 8389 : 8387) * SEGMENT_SIZE);
    const plan = partPlan(size, mode);
    t.is(plan.length, 10_000);
    assertValidPlan(t, plan, size, mode);
    t.true(edges(plan).every((part) => part.blobBytes < 600 * MiB));

    t.true(storedSize(size + 1, mode) > 5 * TiB);
    t.regex(planRefusal(size + 1, mode) ?? '', new RegExp(`at most ${size} bytes`));
    t.throws(() => partPlan(size + 1, mode), { instanceOf: RangeError });
  });
}

test('a plan whose parts would pass 5 GiB is refused, counting the tags server mode adds', (t) => {
  // With room for 2 parts, a part of 5 GiB of plaintext fits as is (e2e) but not sealed (server).
  const size = 10 * GiB;
  t.is(partSize(size, 2), 5 * GiB);
  t.is(planRefusal(size, 'e2e', 2), null);
  t.regex(planRefusal(size, 'server', 2) ?? '', /does not fit in 2 parts of at most 5368709120 bytes/);
  t.regex(planRefusal(size + 1, 'e2e', 2) ?? '', /does not fit in 2 parts/);
});

test('with fewer parts allowed (UPLOAD_MAX_PARTS in tests), a small file gets big parts', (t) => {
  const size = 20 * MiB + 5;
  t.is(partSize(size, 2), 161 * SEGMENT_SIZE);
  const plan = partPlan(size, 'server', 2);
  t.is(plan.length, 2);
  assertValidPlan(t, plan, size, 'server');
});

test('checkPlannable refuses with a validation error naming the field', (t) => {
  const error = t.throws(() => checkPlannable(5 * TiB + 1, 'server', S3_LIMITS.maxParts, 'files.2.size'), {
    instanceOf: DomainError,
  });
  t.is(error?.code, 'validation_error');
  t.is(error?.param, 'files.2.size');
  t.notThrows(() => checkPlannable(maxFileBytes('server'), 'server', S3_LIMITS.maxParts, 'size'));
  t.notThrows(() => checkPlannable(5 * TiB, 'e2e', S3_LIMITS.maxParts, 'size'));
  t.throws(() => checkPlannable(5 * TiB, 'server', S3_LIMITS.maxParts, 'size'), { instanceOf: DomainError });
});
