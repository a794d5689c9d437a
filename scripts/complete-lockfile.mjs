// Completes package-lock.json with the other platforms' optional binaries.
//
//   node scripts/complete-lockfile.mjs [package-lock.json]
//
// Run it after every `npm install` that rewrites the lock file on our machines.
// Packages such as @biomejs/biome and @swc/core list one optional dependency
// per platform (@swc/core-darwin-arm64, @biomejs/cli-win32-x64...). The
// registry our machines reach serves only some of them, so npm leaves the
// others out of the lock, and `npm ci` then refuses the lock as out of sync
// with package.json ("Missing: @swc/core-darwin-arm64@ from lock file"). This
// adds each missing one as npm itself would on a machine that reaches them:
// its locked version, platform (os, cpu, libc) and optional flag, without an
// integrity hash (npm checks the one the registry serves when that platform
// installs it). On this platform npm skips them, as it skips any optional
// package of another platform. A dependency that is not a platform binary is
// never invented: the script fails and names it.
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2] ?? new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;

const PLATFORM =
  /-(aix|android|darwin|freebsd|linux|netbsd|openbsd|sunos|win32)-(arm|arm64|ia32|loong64|ppc64|riscv64|s390x|x64)(?:-(gnu|gnueabihf|musl|msvc))?$/;

// Where npm would find `name` from the package at `path`: its own
// node_modules, then each parent's, up to the root.
function resolve(path, name) {
  let base = path;
  for (;;) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return null;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

const added = [];
const problems = [];
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    if (resolve(path, name)) continue;
    const platform = PLATFORM.exec(name);
    if (!platform || !/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec)) {
      problems.push(`${name}@${spec} (optional dependency of ${path}) is not in the lock and is no platform binary`);
      continue;
    }
    const [, os, cpu, abi] = platform;
    const libc = abi === 'musl' ? ['musl'] : abi === 'gnu' || abi === 'gnueabihf' ? ['glibc'] : undefined;
    // Hoisted beside the package that wants it, as npm places these.
    const at = `${path.slice(0, path.lastIndexOf('node_modules/'))}node_modules/${name}`;
    packages[at] = {
      version: spec,
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(libc ? { libc } : {}),
      ...(entry.license ? { license: entry.license } : {}),
      optional: true,
      os: [os],
    };
    added.push(`${name}@${spec}`);
  }
}

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
// npm's own order: the root first, then paths compared as English text.
const [root, ...rest] = Object.keys(packages);
const order = [root, ...rest.sort((a, b) => a.localeCompare(b, 'en'))];
lock.packages = Object.fromEntries(order.map((key) => [key, packages[key]]));
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.error(added.length > 0 ? `complete-lockfile: added ${added.join(', ')}` : 'complete-lockfile: nothing missing');
