import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// Prints every circle of imports among the project's own TypeScript files, and exits 1 when
// there is one: `sh scripts/node.sh scripts/import-cycles.ts`. Type-only imports count: a
// circle of types still means two modules that cannot be read, changed or moved one at a time.
// test/architecture.test.ts runs the same check, and the layering rules, on every `make test`.

export const SOURCE_DIRS = ['api', 'lib', 'activities', 'workflows', 'workers', 'scripts', 'cli/src', 'sdk/src'];

/** One `import … from` or `export … from` of a project file; paths are relative to the root. */
export type ImportEdge = { from: string; to: string; specifier: string; typeOnly: boolean };

export type ImportGraph = { files: string[]; edges: ImportEdge[] };

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// A statement that starts a line: `import type? <clause> from '…'`, `export type? <clause> from '…'`
// or `import '…'`. Comments and strings cannot start a line with these words in this code base.
const STATEMENT =
  /^(import|export)(\s+type)?\s*(\*(?:\s+as\s+\w+)?|\{[^}]*\}|\w+(?:\s*,\s*(?:\{[^}]*\}|\*\s+as\s+\w+))?)\s*from\s*['"]([^'"]+)['"]|^import\s*['"]([^'"]+)['"]/gm;

/** The imports of one file's text: module specifier, and whether only types are imported. */
export function importsOf(source: string): { specifier: string; typeOnly: boolean }[] {
  const found: { specifier: string; typeOnly: boolean }[] = [];
  for (const match of source.matchAll(STATEMENT)) {
    const [, , typeKeyword, clause, fromSpecifier, bareSpecifier] = match;
    if (bareSpecifier !== undefined) {
      found.push({ specifier: bareSpecifier, typeOnly: false });
      continue;
    }
    if (fromSpecifier === undefined || clause === undefined) continue;
    found.push({ specifier: fromSpecifier, typeOnly: typeKeyword !== undefined || onlyTypeSpecifiers(clause) });
  }
  return found;
}

/** `{ type A, type B }`: erased at run time like `import type`, and counted the same way. */
function onlyTypeSpecifiers(clause: string): boolean {
  if (!clause.startsWith('{')) return false;
  const names = clause
    .slice(1, -1)
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return names.length > 0 && names.every((name) => name.startsWith('type '));
}

/** The project file a relative specifier names, or undefined for packages and non-TypeScript files. */
function resolveSpecifier(root: string, fromFile: string, specifier: string): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const base = resolve(root, dirname(fromFile), specifier);
  const candidates = [base, base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  const file = candidates.find((candidate) => candidate.endsWith('.ts') && isFile(candidate));
  if (file === undefined || file.includes('/node_modules/')) return undefined;
  return relative(root, file);
}

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile();
}

function tsFilesUnder(root: string, dir: string): string[] {
  const absolute = join(root, dir);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.split('/').includes('node_modules'))
    .map((name) => join(dir, name))
    .filter((path) => isFile(join(root, path)));
}

/**
 * The import graph of every .ts file under `dirs`, and of every project file they import,
 * followed to the end: a circle through a file outside `dirs` is still found.
 */
export function importGraph(root = projectRoot, dirs = SOURCE_DIRS): ImportGraph {
  const pending = dirs.flatMap((dir) => tsFilesUnder(root, dir));
  const seen = new Set(pending);
  const edges: ImportEdge[] = [];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    for (const { specifier, typeOnly } of importsOf(readFileSync(join(root, file), 'utf8'))) {
      const to = resolveSpecifier(root, file, specifier);
      if (to === undefined) continue;
      edges.push({ from: file, to, specifier, typeOnly });
      if (!seen.has(to)) {
        seen.add(to);
        pending.push(to);
      }
    }
  }
  return { files: [...seen].sort(), edges };
}

/**
 * Circles of imports, each as the list of its files with the first repeated at the end. Every
 * import that lies on some circle appears in at least one of them (the shortest circle through
 * it), so breaking every circle listed leaves none.
 */
export function findImportCycles(graph: ImportGraph): ImportEdge[][] {
  const next = new Map<string, ImportEdge[]>();
  for (const edge of graph.edges) next.set(edge.from, [...(next.get(edge.from) ?? []), edge]);
  const component = stronglyConnected(graph.files, (file) => (next.get(file) ?? []).map((edge) => edge.to));

  const cycles = new Map<string, ImportEdge[]>();
  for (const edge of graph.edges) {
    const group = component.get(edge.from);
    if (group === undefined || group !== component.get(edge.to)) continue;
    const back = shortestPath(edge.to, edge.from, (file) =>
      (next.get(file) ?? []).filter((e) => component.get(e.to) === group),
    );
    if (back === undefined) continue;
    const cycle = fromSmallestFile([edge, ...back]);
    cycles.set(cycle.map((e) => e.from).join(' '), cycle);
  }
  return [...cycles.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, cycle]) => cycle);
}

/** Tarjan's algorithm: each file's component id; files on no circle still get one, alone. */
function stronglyConnected(files: string[], successors: (file: string) => string[]): Map<string, number> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const component = new Map<string, number>();
  let counter = 0;
  const visit = (file: string) => {
    index.set(file, counter);
    low.set(file, counter);
    counter++;
    stack.push(file);
    onStack.add(file);
    for (const to of successors(file)) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) {
        low.set(file, Math.min(low.get(file) ?? 0, index.get(to) ?? 0));
      }
    }
    if (low.get(file) === index.get(file)) {
      const id = component.size;
      for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
        onStack.delete(member);
        component.set(member, id);
        if (member === file) break;
      }
    }
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return component;
}

/** Breadth first: the fewest imports that lead from `start` to `goal`; [] when they are the same file. */
function shortestPath(start: string, goal: string, edgesOf: (file: string) => ImportEdge[]): ImportEdge[] | undefined {
  const via = new Map<string, ImportEdge | null>([[start, null]]);
  const queue = [start];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (file === goal) {
      const path: ImportEdge[] = [];
      for (let edge = via.get(file); edge; edge = via.get(edge.from)) path.unshift(edge);
      return path;
    }
    for (const edge of edgesOf(file)) {
      if (via.has(edge.to)) continue;
      via.set(edge.to, edge);
      queue.push(edge.to);
    }
  }
  return undefined;
}

/** The same circle read from another file is the same circle: start it at its smallest file. */
function fromSmallestFile(cycle: ImportEdge[]): ImportEdge[] {
  const files = cycle.map((edge) => edge.from);
  const first = files.indexOf([...files].sort()[0] ?? '');
  return [...cycle.slice(first), ...cycle.slice(0, first)];
}

/** `a.ts → b.ts ⇢ a.ts`: a dashed arrow is a type-only import. */
export function describeCycle(cycle: ImportEdge[]): string {
  return [cycle[0]?.from ?? '', ...cycle.map((edge) => `${edge.typeOnly ? '⇢' : '→'} ${edge.to}`)].join(' ');
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const cycles = findImportCycles(importGraph());
  for (const cycle of cycles) console.log(describeCycle(cycle));
  console.error(
    cycles.length === 0 ? 'import-cycles: none' : `import-cycles: ${cycles.length} circle(s) (⇢ type only)`,
  );
  process.exitCode = cycles.length === 0 ? 0 : 1;
}
