// Echoes TAP from stdin and ends with the one line CI reads:
//   tests: N passed, M failed
// scripts/test.sh ends the output of each step with "# exit <name> <status>".
// A failed step counts as one failed test unless it already reported a failing
// test line itself: lint and typecheck print no TAP, and a test runner that
// crashed or found no tests exits non-zero with no "not ok". So no failure is
// ever missing from the count. Skipped and todo tests count as passed.
import { createInterface } from 'node:readline';

let passed = 0;
let failed = 0;
let skipped = 0;
let failedInStep = 0;

for await (const line of createInterface({ input: process.stdin })) {
  const exit = /^# exit (\S+) (\d+)$/.exec(line);
  if (exit) {
    const [, step, status] = exit;
    if (status !== '0' && failedInStep === 0) {
      failed++;
      console.log(`not ok - ${step} (exit status ${status})`);
    }
    failedInStep = 0;
    continue;
  }
  console.log(line);
  const test = /^(not )?ok\b(.*)$/.exec(line);
  if (!test) continue;
  if (/\s#\s*(skip|todo)\b/i.test(test[2])) {
    skipped++;
    passed++;
  } else if (test[1]) {
    failed++;
    failedInStep++;
  } else {
    passed++;
  }
}

if (skipped > 0) console.log(`# ${skipped} skipped or todo, counted as passed`);
console.log(`tests: ${passed} passed, ${failed} failed`);
process.exitCode = failed > 0 ? 1 : 0;
