// Fails when a test file calls `.only` (test.only, test.serial.only...).
//
//   node scripts/check-only.mjs [folder...]     (default: test/)
//
// AVA runs only the `.only` tests of a file and says nothing in its TAP
// output, so one left behind silently drops the rest of the file from the
// run, with exit status 0, in CI as anywhere (AVA 8 does not refuse it in CI).
// scripts/test.sh runs this as a step of `make test`. A match in a line
// comment is ignored; write `.only` in a string as '.' + 'only(' if needed.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const folders = process.argv.length > 2 ? process.argv.slice(2) : [join(root, 'test')];
const ONLY = /\.only\s*\(/;

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
        if (ONLY.test(code)) found.push(`${relative(process.cwd(), file)}:${index + 1}: ${line.trim()}`);
      });
  }
}

if (found.length > 0) {
  console.error(`.only would leave the other tests out of the run; remove it:\n${found.join('\n')}`);
  process.exit(1);
}
console.error(`check-only: no .only in ${folders.map((f) => relative(process.cwd(), f) || '.').join(', ')}`);
