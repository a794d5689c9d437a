import test from 'ava';
import { activitiesByFamily, createActivities, mergeActivities } from '../activities/index.ts';
import { openWorkerResources } from '../lib/composition.ts';
import { loadConfig } from '../lib/config.ts';

// Temporal knows an activity by its name alone. The worker registers one map merged from every
// family's activities (activities/index.ts); two families defining one name must stop it, not
// have one run silently for the other's workflows.

test('two families defining the same activity name are refused, naming both', (t) => {
  const noop = async () => {};
  t.throws(() => mergeActivities({ transfers: { scanFile: noop }, intakes: { scanFile: noop } }), {
    message: 'the activity scanFile is defined by both transfers and intakes',
  });
  t.deepEqual(Object.keys(mergeActivities({ transfers: { a: noop }, intakes: { b: noop } })), ['a', 'b']);
});

test("the worker's families define every activity name once", async (t) => {
  const resources = await openWorkerResources(loadConfig(process.env));
  try {
    const byFamily = activitiesByFamily(resources);
    const names = Object.values(byFamily).flatMap((activities) => Object.keys(activities));
    t.is(new Set(names).size, names.length);
    t.is(Object.keys(createActivities(resources)).length, names.length);
  } finally {
    await resources.close();
  }
});
