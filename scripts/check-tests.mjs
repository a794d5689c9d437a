// Fails when a test file does what AVA lets through silently:
//
//   node scripts/check-tests.mjs [folder...]     (default: test/)
//
// - `.only` (test.only, test.serial.only...): AVA runs only the `.only` tests
//   of a file and says nothing in its TAP output, so one left behind drops the
//   rest of the file from the run, with exit status 0, in CI as anywhere (AVA 8
//   does not refuse it in CI).
// - `t.timeout(...)`: it tells AVA's run-wide timeout (ava.timeout in
//   package.json) to ignore inactivity for that long, and AVA 8 drops a timeout
//   that fires inside such a window without arming it again. A test that hangs
//   afterwards is then never ended: a CI run whose last tests ended within ten
//   minutes of another file's t.timeout(10 min) sat with one test unreported
//   until CI's own limit stopped it. The run-wide timeout covers the slowest test.
//
// scripts/test.sh runs this as a step of `make test`. A match in a line comment
// is ignored; write either in a string as '.' + 'only(' if needed.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const folders = process.argv.length > 2 ? process.argv.slice(2) : [join(root, 'test')];
const RULES = [
  { pattern: /\.only\s*\(/, why: '.only would leave the other tests out of the run' },
  { pattern: /\bt\.timeout\s*\(/, why: 't.timeout can leave a hung test unended (see this script)' },
];

function* files(folder) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && entry.name !== 'fixtures') yield* files(path);
    } else if (/\.(c|m)?(t|j)sx?$/.test(entry.name)) {
      yield path;
    }
  }
}

const found = [];
for (const folder of folders) {
  for (const file of files(folder)) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, index) => {
        const code = line.replace(/^\s*(\/\/|\*|\/\*).*$/, '').replace(/\s\/\/.*$/, '');
        for (const { pattern, why } of RULES) {
          if (pattern.test(code)) found.push(`${relative(process.cwd(), file)}:${index + 1}: ${line.trim()} (${why})`);
        }
      });
  }
}

if (found.length > 0) {
  console.error(`remove these from the tests:\n${found.join('\n')}`);
  process.exit(1);
}
console.error(
  `check-tests: no .only or t.timeout in ${folders.map((f) => relative(process.cwd(), f) || '.').join(', ')}`,
);
