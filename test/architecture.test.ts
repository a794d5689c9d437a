import { readFileSync } from 'node:fs';
import test from 'ava';
import { describeCycle, findImportCycles, type ImportEdge, importGraph, importsOf } from '../scripts/import-cycles.ts';

// The layers of docs/architecture.md, read from the imports themselves: no stack, no server.

const graph = importGraph();

type Layer = 'api' | 'lib' | 'activities' | 'workflows' | 'workers' | 'scripts' | 'cli' | 'sdk';

function layerOf(file: string): Layer {
  if (file.startsWith('cli/src/')) return 'cli';
  if (file.startsWith('sdk/src/')) return 'sdk';
  const top = file.split('/')[0];
  const layers: string[] = ['api', 'lib', 'activities', 'workflows', 'workers', 'scripts'];
  if (top === undefined || !layers.includes(top)) throw new Error(`${file} is in no layer`);
  return top as Layer;
}

/** What each layer may import: its values (at run time), and besides those, its types only. */
const MAY_IMPORT: Record<Layer, { values: Layer[]; typesOnly?: Layer[] }> = {
  api: { values: ['api', 'lib'] },
  // lib/ is what api/ and the workers share: it knows neither, nor the activities.
  lib: { values: ['lib'], typesOnly: ['workflows'] },
  activities: { values: ['activities', 'lib'] },
  // Deterministic code: besides @temporalio/workflow (see below), other workflows and types only.
  workflows: { values: ['workflows'], typesOnly: ['activities', 'lib'] },
  workers: { values: ['workers', 'activities', 'lib'] },
  scripts: { values: ['scripts', 'lib'] },
  cli: { values: ['cli', 'sdk'] },
  // Published on its own: nothing from the server.
  sdk: { values: ['sdk'] },
};

/**
 * The client side of the Temporal seams: they start workflows through their functions and
 * signal them through their defineSignal values (docs/architecture.md, "Workflows"), so they
 * import those values. No other file of lib/ does, but each family's adapter (FAMILY_ADAPTER).
 */
const STARTS_WORKFLOWS = new Set(['lib/temporal.ts', 'lib/rules/plan.ts', 'lib/webhooks/sender.ts']);

/** A family's workflow adapter, `lib/<family>/temporal.ts`, listed in lib/family-workflows.ts. */
const FAMILY_ADAPTER = /^lib\/[\w-]+\/temporal\.ts$/;

const startsWorkflows = (file: string) => STARTS_WORKFLOWS.has(file) || FAMILY_ADAPTER.test(file);

/**
 * Formats written once for the server and the browser: modules of the SDK, free of Node and of
 * the server, that lib/ imports as they are (the ZIP writer, docs/transfers.md "Download all as
 * ZIP"; the webhook signature scheme, docs/webhooks.md "Signatures", which customers verify with).
 */
const SHARED_WITH_SDK = new Set(['sdk/src/zip.ts', 'sdk/src/webhook-signature.ts']);

function allowed(edge: ImportEdge): boolean {
  const rule = MAY_IMPORT[layerOf(edge.from)];
  const to = layerOf(edge.to);
  if (rule.values.includes(to)) return true;
  if (edge.typeOnly && rule.typesOnly?.includes(to)) return true;
  if (to === 'sdk' && layerOf(edge.from) === 'lib' && SHARED_WITH_SDK.has(edge.to)) return true;
  return to === 'workflows' && startsWorkflows(edge.from);
}

const show = (edge: ImportEdge) => `${edge.from} ${edge.typeOnly ? 'imports types from' : 'imports'} ${edge.to}`;

test('no circle of imports among the project files, type-only imports included', (t) => {
  t.true(graph.files.length > 100, 'the walk found the project files');
  t.deepEqual(findImportCycles(graph).map(describeCycle), []);
});

test('each layer imports only the layers below it', (t) => {
  t.deepEqual(graph.edges.filter((edge) => !allowed(edge)).map(show), []);
});

test('workflows import no package but @temporalio/workflow', (t) => {
  const packages = graph.files
    .filter((file) => layerOf(file) === 'workflows')
    .flatMap((file) =>
      importsOf(readFileSync(new URL(`../${file}`, import.meta.url), 'utf8'))
        .filter(({ specifier, typeOnly }) => !specifier.startsWith('.') && !typeOnly)
        .map(({ specifier }) => `${file} imports ${specifier}`),
    );
  t.deepEqual(
    packages.filter((line) => !line.endsWith(' @temporalio/workflow')),
    [],
  );
});

test('lib/ imports nothing of HTTP: no @hapi package (hapi, Boom)', (t) => {
  const http = graph.files
    .filter((file) => layerOf(file) === 'lib')
    .flatMap((file) =>
      importsOf(readFileSync(new URL(`../${file}`, import.meta.url), 'utf8'))
        .filter(({ specifier }) => specifier.startsWith('@hapi/'))
        .map(({ specifier }) => `${file} imports ${specifier}`),
    );
  t.deepEqual(http, []);
});

test('the seams that start workflows exist, so the exception above names real files', (t) => {
  const adapters = graph.files.filter((file) => FAMILY_ADAPTER.test(file));
  t.true(adapters.length > 0, 'the families have workflow adapters');
  for (const file of [...STARTS_WORKFLOWS, ...adapters]) {
    t.true(
      graph.edges.some((edge) => edge.from === file && layerOf(edge.to) === 'workflows' && !edge.typeOnly),
      file,
    );
  }
});

// The checker itself: a circle it cannot see would make the first test pass for nothing.

test('importsOf reads every form of import and export, and which erase to nothing', (t) => {
  const source = [
    "import { a, type B } from './values.ts';",
    "import type { C } from './types.ts';",
    'import {',
    '  type D,',
    '  type E,',
    "} from './only-types.ts';",
    "import * as all from './namespace.ts';",
    "import whole, { f } from './default.ts';",
    "export { g } from './reexport.ts';",
    "export type { H } from './reexport-type.ts';",
    "export * from './star.ts';",
    "import './side-effect.ts';",
    "// import { x } from './commented.ts';",
    'const text = "import { y } from \'./in-a-string.ts\'";',
  ].join('\n');
  t.deepEqual(importsOf(source), [
    { specifier: './values.ts', typeOnly: false },
    { specifier: './types.ts', typeOnly: true },
    { specifier: './only-types.ts', typeOnly: true },
    { specifier: './namespace.ts', typeOnly: false },
    { specifier: './default.ts', typeOnly: false },
    { specifier: './reexport.ts', typeOnly: false },
    { specifier: './reexport-type.ts', typeOnly: true },
    { specifier: './star.ts', typeOnly: false },
    { specifier: './side-effect.ts', typeOnly: false },
  ]);
});

test('findImportCycles finds a circle of types, and one through files of two layers', (t) => {
  const edge = (from: string, to: string, typeOnly = false) => ({ from, to, specifier: to, typeOnly });
  const cycles = findImportCycles({
    files: ['a.ts', 'b.ts', 'c.ts', 'd.ts', 'e.ts'],
    edges: [
      edge('a.ts', 'b.ts', true),
      edge('b.ts', 'a.ts', true),
      edge('c.ts', 'd.ts'),
      edge('d.ts', 'e.ts'),
      edge('e.ts', 'c.ts', true),
      edge('e.ts', 'a.ts'),
    ],
  }).map(describeCycle);
  t.deepEqual(cycles, ['a.ts ⇢ b.ts ⇢ a.ts', 'c.ts → d.ts → e.ts ⇢ c.ts']);
});
