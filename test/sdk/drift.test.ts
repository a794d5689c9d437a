import { readFile } from 'node:fs/promises';
import test from 'ava';
import { GENERATED_TYPES_PATH } from '../../sdk/scripts/generate-types.ts';
import type { OpenApiDocument } from '../../sdk/scripts/openapi-document.ts';
import { GENERATED_EVENTS_PATH, renderFormattedEvents } from '../../sdk/scripts/render-events.ts';
import { renderFormattedTypes } from '../../sdk/scripts/render-types.ts';
import { EXCLUDED_OPERATIONS, ROUTES, Valise } from '../../sdk/src/index.ts';
import { startApi, type TestApi } from '../helpers/api.ts';

// The SDK and the API cannot drift: the committed types are what the live
// OpenAPI document generates, and the SDK's route table covers the document.

let api: TestApi;
let document: OpenApiDocument;
test.before(async () => {
  api = await startApi();
  const response = await api.call('GET', '/v1/openapi.json');
  if (response.status !== 200) throw new Error(`GET /v1/openapi.json answered ${response.status}`);
  document = response.body;
});
test.after.always(() => api.close());

const documented = () =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
  );

test('sdk/src/generated/openapi.ts is exactly what the live OpenAPI document generates', async (t) => {
  const committed = await readFile(GENERATED_TYPES_PATH, 'utf8');
  const fresh = renderFormattedTypes(document);
  t.true(
    committed === fresh,
    'The SDK types are stale: run `node --import tsx sdk/scripts/generate-types.ts` and review the diff.',
  );
});

test('sdk/src/generated/events.ts is exactly what the event catalog generates', async (t) => {
  const committed = await readFile(GENERATED_EVENTS_PATH, 'utf8');
  t.true(
    committed === renderFormattedEvents(),
    'The SDK event types are stale: run `node --import tsx sdk/scripts/generate-types.ts` and review the diff.',
  );
});

test('every route-table entry is a documented operation with an SDK method behind it', (t) => {
  const operations = new Set(documented());
  const valise = new Valise({ baseUrl: api.url });
  for (const [name, operation] of Object.entries(ROUTES)) {
    t.true(operations.has(operation), `${name}: ${operation} is not in /v1/openapi.json`);
    const [namespace = '', method = ''] = name.split('.');
    const resource = (valise as unknown as Record<string, Record<string, unknown>>)[namespace];
    t.is(typeof resource?.[method], 'function', `${name}: valise.${name} is not a method`);
  }
});

/** Operations whose route says the SDK leaves them out, and why (`plugins.valise.sdk`, api/types.ts). */
const excludedByRoute = () =>
  Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => typeof (operation as { 'x-sdk-excluded'?: unknown })['x-sdk-excluded'] === 'string')
      .map(([method]) => `${method.toUpperCase()} ${path}`),
  );

test('every documented /v1 operation is covered by the SDK or excluded with a reason', (t) => {
  const covered = new Set<string>(Object.values(ROUTES));
  const byRoute = new Set(excludedByRoute());
  const missing = documented().filter(
    (operation) =>
      operation.split(' ')[1]?.startsWith('/v1/') &&
      !covered.has(operation) &&
      !(operation in EXCLUDED_OPERATIONS) &&
      !byRoute.has(operation),
  );
  t.deepEqual(missing, [], 'add these to sdk/src/routes.ts (and a method), or to EXCLUDED_OPERATIONS with a reason');
  for (const excluded of Object.keys(EXCLUDED_OPERATIONS)) {
    t.true(documented().includes(excluded), `${excluded} is excluded but no longer documented`);
    t.false(covered.has(excluded), `${excluded} is both covered and excluded`);
  }
  for (const excluded of byRoute) t.false(covered.has(excluded), `${excluded} is both covered and excluded`);
});

// Operations whose success is not a JSON document: the SDK streams them.
const NOT_JSON = new Set([
  'PUT /v1/uploads/{token}',
  'GET /v1/downloads/{token}',
  'GET /v1/intake-downloads/{token}',
  'GET /v1/openapi.json',
]);

test('every JSON operation the SDK calls declares its response schema, so its type is generated', (t) => {
  const untyped = Object.values(ROUTES).filter((operation) => {
    if (NOT_JSON.has(operation)) return false;
    const [method = '', path = ''] = operation.split(' ');
    const responses = (document.paths[path]?.[method.toLowerCase()] as { responses?: Record<string, unknown> })
      ?.responses;
    return !Object.entries(responses ?? {}).some(
      ([status, response]) => status.startsWith('2') && (response as { content?: unknown }).content !== undefined,
    );
  });
  t.deepEqual(untyped, [], 'add `response: { schema }` to these routes and regenerate the SDK types');
});
