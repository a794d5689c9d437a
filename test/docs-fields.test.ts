import test from 'ava';
import type { OpenApiDocument } from '../sdk/scripts/openapi-document.ts';
import { startApi, type TestApi } from './helpers/api.ts';
import { compareTable, type FieldTable, readFieldTables, resolveTie } from './helpers/docs-fields.ts';

// The docs' field tables say what the API sends and takes, field for field: each is tied to its
// place in the served OpenAPI document (docs/conventions.md, "Field tables") and compared with it,
// so a third party following the docs never looks for a field the API does not have.

/** Generated from the event catalog and held to it by test/event-catalog.test.ts, not by OpenAPI. */
const NOT_OPENAPI = ['events.md'];
let api: TestApi;
let document: OpenApiDocument;
let tables: FieldTable[];
test.before(async () => {
  api = await startApi();
  const response = await api.call('GET', '/v1/openapi.json');
  if (response.status !== 200) throw new Error(`GET /v1/openapi.json answered ${response.status}`);
  document = response.body;
  tables = await readFieldTables(NOT_OPENAPI);
});
test.after.always(() => api.close());

test('every field table of the docs is tied to the part of the OpenAPI document it describes', (t) => {
  const untied = tables.filter((table) => !table.tie).map((table) => `docs/${table.file}:${table.line}`);
  t.deepEqual(untied, [], 'add <!-- openapi: METHOD /path request|STATUS [member] --> on the line before');
  for (const table of tables) {
    if (!table.tie) continue;
    const schema = resolveTie(document, table.tie);
    t.not(typeof schema, 'string', `docs/${table.file}:${table.line}: ${schema}`);
  }
});

test('every tied table names exactly the fields of its schema, with their types', (t) => {
  const problems: string[] = [];
  for (const table of tables) {
    const schema = table.tie ? resolveTie(document, table.tie) : 'untied';
    if (typeof schema !== 'string') problems.push(...compareTable(table, schema));
  }
  t.deepEqual(problems, []);
});

test('every family of the OpenAPI document (its tags) has an object described in a tied table', (t) => {
  const tags = new Set(
    Object.values(document.paths).flatMap((methods) => Object.values(methods).flatMap((op) => op.tags ?? [])),
  );
  const described = new Set(
    tables.flatMap((table) =>
      table.tie ? (document.paths[table.tie.path]?.[table.tie.method.toLowerCase()]?.tags ?? []) : [],
    ),
  );
  t.true(tags.size > 10, `only ${tags.size} tags: ${[...tags].join(', ')}`);
  t.deepEqual(
    [...tags].filter((tag) => !described.has(tag)).sort(),
    [],
    'families whose objects no field table of the docs describes',
  );
});

test('the comparison finds what drifts: a renamed field, a missing one, a wrong type or nullability', (t) => {
  const schema = {
    type: 'object',
    properties: {
      file_id: { type: 'string', format: 'uuid' },
      url: { type: 'string' },
      size: { type: 'integer' },
      expires_at: { type: ['string', 'null'], format: 'date-time' },
    },
  };
  const table = (rows: string[][]): FieldTable => ({
    file: 'example.md',
    line: 1,
    tie: null,
    header: ['Field', 'Type', 'Notes'],
    rows: rows.map((cells, i) => ({ line: i + 3, cells })),
  });
  const right = [
    ['`file_id`', 'uuid', ''],
    ['`url`', 'string', ''],
    ['`size`', 'integer', ''],
    ['`expires_at`', 'date-time or null', ''],
  ];
  t.deepEqual(compareTable(table(right), schema), []);
  // What docs/intakes.md once said of a submission's answer: `id`, `upload_url`, `encrypted_size`.
  const drifted = compareTable(
    table([
      ['`id`', 'uuid', ''],
      ['`upload_url`', 'string', ''],
      ['`encrypted_size`', 'integer', ''],
      ['`expires_at`', 'date-time', ''],
    ]),
    schema,
  );
  for (const expected of [
    '`id` is not a field',
    '`upload_url` is not a field',
    '`encrypted_size` is not a field',
    '`file_id` is missing',
    '`url` is missing',
    '`size` is missing',
    '`expires_at` is nullable in the API',
  ]) {
    t.true(
      drifted.some((problem) => problem.includes(expected)),
      `expected "${expected}" in:\n${drifted.join('\n')}`,
    );
  }
  const wrongType = compareTable(
    table(right.map((row) => (row[0] === '`size`' ? ['`size`', 'string', ''] : row))),
    schema,
  );
  t.deepEqual(wrongType, ['docs/example.md:5: `size` is documented as string, the API says integer']);
});
