import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';

// scripts/setup.sh and the Dockerfile install with npm ci, which refuses a lock
// file out of sync with package.json (scripts/complete-lockfile.mjs keeps it in
// sync). A dry run checks that offline, in a folder of its own.

const ROOT = fileURLToPath(new URL('..', import.meta.url));

test('npm ci accepts the committed package-lock.json, with and without devDependencies', async (t) => {
  const folder = await mkdtemp(join(tmpdir(), 'valise-lock-'));
  t.teardown(() => rm(folder, { recursive: true, force: true }));
  await copyFile(join(ROOT, 'package.json'), join(folder, 'package.json'));
  await copyFile(join(ROOT, 'package-lock.json'), join(folder, 'package-lock.json'));
  for (const omit of [[], ['--omit=dev']]) {
    const { stdout } = await promisify(execFile)(
      'npm',
      ['ci', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', ...omit],
      { cwd: folder, timeout: 60_000 },
    );
    t.regex(stdout, /^add @swc\/core /m, `npm ci ${omit.join(' ')}`);
  }
  // The dry run left the lock file as it was.
  t.is(
    await readFile(join(folder, 'package-lock.json'), 'utf8'),
    await readFile(join(ROOT, 'package-lock.json'), 'utf8'),
  );
});

test('every optional platform binary that a locked package lists is in the lock file', async (t) => {
  const lock = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { optionalDependencies?: Record<string, string> }>;
  };
  const missing = Object.entries(lock.packages).flatMap(([path, entry]) =>
    Object.keys(entry.optionalDependencies ?? {})
      .filter((name) => !lock.packages[`node_modules/${name}`] && !lock.packages[`${path}/node_modules/${name}`])
      .map((name) => `${name} (of ${path})`),
  );
  t.deepEqual(missing, [], 'run node scripts/complete-lockfile.mjs');
});
