import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { ROUTES } from '../sdk/src/routes.ts';
import { startApi, type TestApi } from './helpers/api.ts';
import { runCommand } from './helpers/command.ts';

// The published document is one that tools trust: `redocly lint` with the recommended ruleset
// (redocly.yaml) finds nothing in it, every operation has the operationId of its SDK method,
// and no field is published with a pattern that refuses what the API accepts.

const ROOT = fileURLToPath(new URL('../', import.meta.url));

type Operation = {
  operationId?: string;
  security?: unknown[];
  description?: string;
  responses: Record<string, { $ref?: string }>;
  'x-required-scope'?: string;
};
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown> };
};

let api: TestApi;
let document: Document;
let text: string;
test.before(async () => {
  api = await startApi();
  const response = await api.call('GET', '/v1/openapi.json');
  if (response.status !== 200) throw new Error(`GET /v1/openapi.json answered ${response.status}`);
  document = response.body;
  text = response.text;
});
test.after.always(() => api.close());

const operations = () =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, operation })),
  );

test('redocly lint (recommended ruleset) finds no error and no warning in the live document', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'valise-openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    await writeFile(file, text);
    const result = await runCommand(
      join(ROOT, 'node_modules/.bin/redocly'),
      ['lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format=json'],
      {
        // Offline: no telemetry, no update check.
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        timeoutMs: 90_000,
      },
    );
    const start = result.stdout.indexOf('{');
    t.true(start >= 0, `redocly printed no report (exit ${result.code}): ${result.stderr.slice(0, 2000)}`);
    const report = JSON.parse(result.stdout.slice(start)) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
    };
    const problems = report.problems.map(
      (p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`,
    );
    t.deepEqual(
      { errors: report.totals.errors, warnings: report.totals.warnings },
      { errors: 0, warnings: 0 },
      problems.join('\n'),
    );
    t.is(result.code, 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('every SDK route-table entry is the operation whose operationId is its name', (t) => {
  const byKey = new Map(operations().map(({ key, operation }) => [key, operation.operationId]));
  for (const [name, operation] of Object.entries(ROUTES)) {
    t.is(byKey.get(operation), name, `${operation} must have operationId '${name}' (options.id of its route)`);
  }
});

test('every operation has a unique operationId that code generators accept', (t) => {
  const ids = operations().map(({ key, operation }) => {
    t.regex(operation.operationId ?? '', /^[a-z][A-Za-z]*\.[a-z][A-Za-z]*$/, `${key}: operationId`);
    return operation.operationId;
  });
  t.is(new Set(ids).size, ids.length, 'operationIds must be unique');
});

test('every operation lists its error responses with the envelope (or the SCIM error), and says who may call it', (t) => {
  for (const { key, operation } of operations()) {
    // 4xx and 500 are the envelope; a 503 of its own (GET /v1/health's report) is not an error envelope.
    const errors = Object.entries(operation.responses).filter(([status]) => /^(4\d\d|500)$/.test(status));
    t.true(errors.length > 0, `${key}: no error response`);
    t.true(
      errors.every(([, response]) => response.$ref?.startsWith('#/components/responses/')),
      `${key}: error responses must be the shared envelope responses`,
    );
    const scim = operation.security?.some((requirement) => 'scimToken' in (requirement as object)) ?? false;
    t.is(
      errors.every(([, response]) => response.$ref?.startsWith('#/components/responses/Scim')),
      scim,
      `${key}: the SCIM error body is for the routes a SCIM token opens, and only them`,
    );
    t.truthy(operation.responses['500'], `${key}: 500`);
    if (operation.security?.length === 0) {
      t.regex(operation.description ?? '', /Public: no API key\./, `${key}: public, and says so`);
      t.falsy(operation.responses['401'], `${key}: public, yet documents 401`);
    } else {
      // One credential, or alternatives (the hosted MCP control endpoint takes an API key or an MCP token).
      t.true(
        (operation.security?.length ?? 0) >= 1 &&
          (operation.security ?? []).every((requirement) =>
            ['bearer', 'scimToken', 'mcpToken', 'publishableKey'].includes(Object.keys(requirement ?? {})[0] ?? ''),
          ),
        `${key}: security ${JSON.stringify(operation.security)}`,
      );
      const mcpOnly = operation.security?.length === 1 && 'mcpToken' in (operation.security[0] as object);
      if (mcpOnly) t.regex(operation.description ?? '', /Requires an MCP token/, `${key}: says it takes an MCP token`);
      if (scim) t.regex(operation.description ?? '', /Requires a SCIM token/, `${key}: says it takes a SCIM token`);
      const publishable = operation.security?.some((requirement) => 'publishableKey' in (requirement as object));
      if (publishable) {
        t.regex(operation.description ?? '', /Requires a publishable key/, `${key}: says it takes a publishable key`);
      }
      t.truthy(operation.responses['401'], `${key}: 401`);
      // A SCIM token and a publishable key have no scope: they open every route of their kind (of their
      // workspace, of their intake), or none.
      if (!scim && !publishable) t.truthy(operation.responses['403'], `${key}: 403`);
      const scope = operation['x-required-scope'];
      if (scope) t.true(operation.description?.includes(`\`${scope}\``), `${key}: the description names ${scope}`);
    }
  }
});

test('fields that refuse NUL are published with a pattern that accepts every other string', (t) => {
  // joi's inverted pattern used to come out as `"pattern": "\u0000"`: every valid value invalid.
  t.false(text.includes('"pattern":"\\\\u0000"'), 'a NUL-refusing field is published as requiring a NUL');
  const create = document.paths['/v1/transfers']?.post as any;
  const title = create?.requestBody?.content?.['application/json']?.schema?.properties?.transfer_title;
  t.is(typeof title?.pattern, 'string', 'transfer_title has a pattern');
  const pattern = new RegExp(title?.pattern ?? '');
  t.true(pattern.test('Quarterly report ✓'));
  t.false(pattern.test('bad\u0000title'));
});
