// Echoes TAP from stdin and ends with the one line CI reads:
//   tests: N passed, M failed
// or, when tests were skipped (`test.skip`) or left to do (`test.todo`):
//   tests: N passed, M failed, K skipped
// Skipped and todo tests never count as passed; the comment line before the
// summary tells them apart.
// scripts/test.sh ends the output of each step with "# exit <name> <status>".
// A failed step counts as one failed test unless it already reported a failing
// test line itself: lint and typecheck print no TAP, and a test runner that
// crashed or found no tests exits non-zero with no "not ok". So no failure is
// ever missing from the count.
import { createInterface } from 'node:readline';

let passed = 0;
let failed = 0;
let skipped = 0;
let todo = 0;
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
  // A directive follows an unescaped '#': "# SKIP reason", "# TODO reason".
  const directive = /(?:^|[^\\])#\s*(skip|todo)\b/i.exec(test[2] ?? '')?.[1]?.toLowerCase();
  if (directive === 'skip') {
    skipped++;
  } else if (directive === 'todo') {
    todo++; // a todo test's "not ok" is expected (TAP 13), and is no pass either
  } else if (test[1]) {
    failed++;
    failedInStep++;
  } else {
    passed++;
  }
}

if (skipped + todo > 0) console.log(`# ${skipped} skipped, ${todo} todo: not counted as passed`);
console.log(`tests: ${passed} passed, ${failed} failed${skipped + todo > 0 ? `, ${skipped + todo} skipped` : ''}`);
process.exitCode = failed > 0 ? 1 : 0;
