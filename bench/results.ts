import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

// Where every benchmark writes its figures: bench/results/<name>-<start time>.json (git-ignored).
const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));

export function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: RESULTS, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

/** What a report says first: when it ran, on which commit, Node and machine. */
export function runContext(startedAt: Date) {
  return {
    at: startedAt.toISOString(),
    commit: gitCommit(),
    node: process.version,
    cpus: availableParallelism(),
    cpu_model: cpus()[0]?.model ?? null,
  };
}

export function writeResults(name: string, startedAt: Date, report: object): string {
  mkdirSync(RESULTS, { recursive: true });
  const stamp = startedAt
    .toISOString()
    .replaceAll(':', '-')
    .replace(/\.\d+Z$/, 'Z');
  const file = `${RESULTS}${name}-${stamp}.json`;
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
