import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { ROOT } from './streaming.ts';

// Where a process spent its CPU: reads a V8 `.cpuprofile` (as `node --cpu-prof` writes, e.g. the
// API's under BENCH_CPU_PROF_DIR) and prints the functions with the most self time, and the same
// summed by package or project folder.
//
//   sh scripts/node.sh bench/profile-summary.ts <file.cpuprofile> [top N]

type ProfileNode = {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
};
type Profile = { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };

const [file, top = '25'] = process.argv.slice(2);
if (!file) throw new Error('usage: bench/profile-summary.ts <file.cpuprofile> [top N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMicros = new Map<number, number>();
profile.samples.forEach((id, index) => {
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
});
const total = [...selfMicros.values()].reduce((sum, micros) => sum + micros, 0);
// A bench's API waits most of its life (set-up, scans, other rows): shares of its busy time say
// where the work went.
const idle = [...selfMicros].reduce(
  (sum, [id, micros]) => (byId.get(id)?.callFrame.functionName === '(idle)' ? sum + micros : sum),
  0,
);
const busy = total - idle;

/** A frame's place: a package under node_modules, a project file, Node's own code, or V8's. */
function placeOf(url: string): string {
  if (!url) return '(native or V8)';
  if (url.startsWith('node:')) return 'node:';
  const path = url.replace(/^file:\/\//, '');
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (inModules?.[1]) return inModules[1];
  return relative(ROOT, path).split('/').slice(0, 2).join('/');
}

function tally(key: (node: ProfileNode) => string) {
  const sums = new Map<string, number>();
  for (const [id, micros] of selfMicros) {
    const node = byId.get(id);
    if (node) sums.set(key(node), (sums.get(key(node)) ?? 0) + micros);
  }
  return [...sums].sort((a, b) => b[1] - a[1]).slice(0, Number(top));
}

const percent = (micros: number) => `${((100 * micros) / total).toFixed(1)}%`;
const ofBusy = (micros: number) => `${((100 * micros) / busy).toFixed(1)}%`;
console.log(`${(total / 1e6).toFixed(2)} s of samples in ${file}, ${(busy / 1e6).toFixed(2)} s busy\n`);
console.log('| self | of busy time | function | where |\n|---:|---:|---|---|');
for (const [key, micros] of tally((node) => {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'}\t${url ? `${relative(ROOT, url.replace(/^file:\/\//, ''))}:${lineNumber + 1}` : ''}`;
})) {
  const [name, where] = key.split('\t');
  console.log(`| ${percent(micros)} | ${name === '(idle)' ? '' : ofBusy(micros)} | ${name} | ${where} |`);
}
console.log('\n| self | of busy time | package or folder |\n|---:|---:|---|');
for (const [place, micros] of tally((node) =>
  node.callFrame.functionName === '(idle)' ? '(idle)' : placeOf(node.callFrame.url),
))
  console.log(`| ${percent(micros)} | ${place === '(idle)' ? '' : ofBusy(micros)} | ${place} |`);
