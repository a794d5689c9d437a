// Every fault scenario, for `make test-faults` (scripts/test.sh --faults): those `make test` runs
// (test/faults/*.test.ts) and the long ones (test/faults/long/), one file at a time, nothing beside.
import faults from './ava.config.mjs';

export default { ...faults, files: ['test/faults/*.test.ts', 'test/faults/long/*.test.ts'], timeout: '900s' };
