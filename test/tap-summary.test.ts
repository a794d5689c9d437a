import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { runCommand } from './helpers/command.ts';

// The two scripts make test ends with: scripts/tap-summary.mjs (the closing
// line CI reads) and scripts/check-tests.mjs (a stray .only or t.timeout fails the run).

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const run = (script: string, args: string[], input = '') =>
  runCommand(process.execPath, [join(ROOT, 'scripts', script), ...args], { input });

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1);

test('tap-summary counts skipped and todo tests apart from passed ones, on the closing line', async (t) => {
  const tap = [
    'TAP version 13',
    'ok 1 - works',
    'ok 2 - also works',
    'ok 3 - not yet # SKIP',
    'ok 4 - skipped with a reason # skip flaky on CI',
    'not ok 5 - to write # TODO',
    'ok 6 - a title with an escaped \\# SKIP is a pass',
    '# exit ava 0',
    '1..6',
  ].join('\n');
  const { code, stdout } = await run('tap-summary.mjs', [], tap);
  t.is(code, 0);
  t.is(lastLine(stdout), 'tests: 3 passed, 0 failed, 3 skipped');
  t.regex(stdout, /^# 2 skipped, 1 todo: not counted as passed$/m);
});

test('tap-summary ends on "N passed, M failed" alone when nothing was skipped', async (t) => {
  const { code, stdout } = await run('tap-summary.mjs', [], 'ok 1 - a\nok 2 - b\n# exit ava 0\n');
  t.is(code, 0);
  t.is(lastLine(stdout), 'tests: 2 passed, 0 failed');
  t.notRegex(stdout, /skipped/);
});

test('tap-summary fails the run on a failing test and on a failing step that printed no TAP, once each', async (t) => {
  const tap = [
    '# exit lint 0',
    '# exit typecheck 2', // no TAP of its own: counted as one failure
    'ok 1 - fine',
    'not ok 2 - broken',
    '  ---',
    '  message: boom',
    '  ...',
    'ok 3 - skipped # SKIP',
    '# exit ava 1', // its failure is already counted by "not ok 2"
  ].join('\n');
  const { code, stdout } = await run('tap-summary.mjs', [], tap);
  t.is(code, 1);
  t.regex(stdout, /^not ok - typecheck \(exit status 2\)$/m);
  t.is(lastLine(stdout), 'tests: 1 passed, 2 failed, 1 skipped');
});

test('check-tests fails, naming file and line, when a test file calls .only or t.timeout, and passes without', async (t) => {
  const folder = await mkdtemp(join(tmpdir(), 'valise-only-'));
  t.teardown(() => rm(folder, { recursive: true, force: true }));
  const only = ['.', 'only'].join(''); // so that this file itself has none
  await writeFile(join(folder, 'clean.test.ts'), `import test from 'ava';\n// test${only}( in a comment\n`);
  const clean = await run('check-tests.mjs', [folder]);
  t.is(clean.code, 0, clean.stderr);

  await writeFile(
    join(folder, 'stray.test.ts'),
    `import test from 'ava';\n\ntest.serial${only}('x', (t) => t.pass());\n`,
  );
  const stray = await run('check-tests.mjs', [folder]);
  t.is(stray.code, 1);
  t.regex(stray.stderr, /stray\.test\.ts:3: test\.serial\.only\('x'/);

  await rm(join(folder, 'stray.test.ts'));
  const timeout = ['t', 'timeout'].join('.');
  await writeFile(
    join(folder, 'slow.test.ts'),
    `import test from 'ava';\n\ntest('x', (t) => {\n  ${timeout}(60_000);\n});\n`,
  );
  const slow = await run('check-tests.mjs', [folder]);
  t.is(slow.code, 1);
  t.regex(slow.stderr, /slow\.test\.ts:4: t\.timeout\(60_000\)/);
});

test('check-tests finds no .only or t.timeout in the project test files', async (t) => {
  const { code, stderr } = await run('check-tests.mjs', []);
  t.is(code, 0, stderr);
});
