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
// Before the summary, every failure is named again: a CI log that keeps only
// its tail still says which tests failed.
import { createInterface } from 'node:readline';

let passed = 0;
let failed = 0;
let skipped = 0;
let todo = 0;
let failedInStep = 0;
const failures = [];
let failingInStep = []; // named once the step's "# exit" line gives its name

for await (const line of createInterface({ input: process.stdin })) {
  const exit = /^# exit (\S+) (\d+)$/.exec(line);
  if (exit) {
    const [, name, status] = exit;
    failures.push(...failingInStep.map((title) => `${name}: ${title}`));
    if (status !== '0' && failedInStep === 0) {
      failed++;
      failures.push(`${name}: exit status ${status}`);
      console.log(`not ok - ${name} (exit status ${status})`);
    }
    failedInStep = 0;
    failingInStep = [];
    continue;
  }
  console.log(line);
  // The YAML block under a "not ok" says why; its message goes with the name.
  const message = /^\s+message:\s*(.+)$/.exec(line)?.[1];
  if (message && failingInStep.length > 0 && !failingInStep.at(-1).includes(' — ')) {
    failingInStep[failingInStep.length - 1] += ` — ${message.slice(0, 200)}`;
  }
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
    failingInStep.push(test[2].replace(/^\s*\d*\s*-?\s*/, ''));
  } else {
    passed++;
  }
}

failures.push(...failingInStep); // a run cut short before its step's end
if (failures.length > 0) console.log(`# failed:\n${failures.map((failure) => `#   ${failure}`).join('\n')}`);
if (skipped + todo > 0) console.log(`# ${skipped} skipped, ${todo} todo: not counted as passed`);
console.log(`tests: ${passed} passed, ${failed} failed${skipped + todo > 0 ? `, ${skipped + todo} skipped` : ''}`);
process.exitCode = failed > 0 ? 1 : 0;
