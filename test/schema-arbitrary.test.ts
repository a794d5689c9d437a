import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import test from 'ava';
import fc from 'fast-check';
import { loadOpenApiDocument } from '../sdk/scripts/openapi-document.ts';
import { hostile, type JsonSchema, valid } from './helpers/schema-arbitrary.ts';

// The arbitraries test/fuzz-openapi.test.ts draws from the OpenAPI document: values `valid` draws
// are accepted by ajv (JSON Schema 2020-12, formats on) against the very schema they came from,
// for every keyword the derivation covers and for every request schema the document publishes;
// values `hostile` draws are, for a schema with constraints, mostly refused by it.

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ajv = () => addFormats(new Ajv2020({ strict: false, allErrors: true, validateFormats: true }));

const SCHEMAS: Record<string, JsonSchema> = {
  'types, nullable and const': {
    type: 'object',
    properties: {
      n: { type: ['string', 'null'], maxLength: 5 },
      k: { const: 'transfer' },
      b: { type: 'boolean' },
    },
    required: ['n', 'k'],
    additionalProperties: false,
  },
  'enum, formats and patterns': {
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['active', 'expired'] },
      id: { type: 'string', format: 'uuid' },
      at: { type: 'string', format: 'date-time' },
      email: { type: 'string', format: 'email', maxLength: 320 },
      url: { type: 'string', format: 'uri' },
      ref: { type: 'string', pattern: '^in_[0-9a-v]{26}$' },
      tag: { type: 'string', pattern: '^[\\p{L}\\p{N}][\\p{L}\\p{N} _.:/-]*$', minLength: 1, maxLength: 40 },
      name: { type: 'string', not: { enum: ['.', '..'] }, pattern: '^[^/\\\\\\x00-\\x1f]*$', minLength: 1 },
    },
    required: ['status', 'id', 'at', 'email', 'url', 'ref', 'tag', 'name'],
    additionalProperties: false,
  },
  'numbers and their bounds': {
    type: 'object',
    properties: {
      limit: { type: 'integer', minimum: 1, maximum: 500 },
      hours: { type: 'number', exclusiveMinimum: 0, maximum: 168 },
      size: { type: 'integer', minimum: 0, maximum: 5 * 1024 ** 4 },
    },
    required: ['limit', 'hours', 'size'],
  },
  'arrays, maps, unions and conditions': {
    type: 'object',
    properties: {
      scopes: {
        type: 'array',
        items: { type: 'string', enum: ['a', 'b', 'c'] },
        minItems: 1,
        maxItems: 3,
        uniqueItems: true,
      },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      config: {
        anyOf: [
          {
            type: 'object',
            properties: { hours: { type: 'integer', minimum: 1 } },
            required: ['hours'],
            additionalProperties: false,
          },
          { type: 'null' },
        ],
      },
      // JSON Schema's `if`/`then`/`else`, built from entries: an object literal with `then` reads as a promise.
      conditions: Object.fromEntries([
        ['if', { type: 'object' }],
        [
          'then',
          { type: 'object', properties: { min_files: { type: 'integer', minimum: 1 } }, additionalProperties: false },
        ],
        ['else', {}],
      ]),
      error: { $ref: '#/components/schemas/Error' },
    },
    required: ['scopes', 'error'],
  },
};

const ROOT = {
  components: {
    schemas: {
      Error: {
        type: 'object',
        properties: { code: { type: 'string' }, param: { type: ['string', 'null'] } },
        required: ['code', 'param'],
        additionalProperties: false,
      },
    },
  },
};

/** The schema under test, compiled with the root's components beside it (where its `$ref` points). */
const compileWithRoot = (schema: JsonSchema) => ajv().compile({ ...(schema as object), components: ROOT.components });

for (const [name, schema] of Object.entries(SCHEMAS)) {
  test(`valid values of "${name}" are accepted by the schema they were drawn from`, (t) => {
    const check = compileWithRoot(schema);
    fc.assert(
      fc.property(valid(schema, { root: ROOT }), (value) => {
        if (!check(value)) throw new Error(`${JSON.stringify(value)}: ${ajv().errorsText(check.errors)}`);
      }),
      { numRuns: 200 },
    );
    t.pass();
  });

  test(`hostile values of "${name}" are mostly refused by it`, (t) => {
    const check = compileWithRoot(schema);
    const values = fc.sample(hostile(schema, { root: ROOT }), 200);
    const refused = values.filter((value) => !check(value)).length;
    t.true(refused >= 140, `only ${refused} of 200 hostile values refused`);
  });
}

test('hostile strings carry the characters that break servers', (t) => {
  const drawn = fc.sample(hostile({ type: 'string', maxLength: 10 }), 2_000) as string[];
  const probes: Array<[string, (value: string) => boolean]> = [
    ['NUL', (value) => value.includes('\u0000')],
    ['RTL override', (value) => value.includes('\u202e')],
    ['4-byte emoji', (value) => /\p{Extended_Pictographic}/u.test(value) && [...value].some((c) => c.length === 2)],
    ['a lone surrogate', (value) => !value.isWellFormed()],
    ['a path traversal', (value) => value.includes('../')],
    ['an overlong string', (value) => [...value].length > 10],
  ];
  for (const [what, probe] of probes) {
    t.true(
      drawn.some((value) => typeof value === 'string' && probe(value)),
      what,
    );
  }
});

test('valid values of every request schema the document publishes are accepted by it', async (t) => {
  const document = (await loadOpenApiDocument()) as unknown as {
    paths: Record<
      string,
      Record<
        string,
        {
          parameters?: Array<{ name?: string; schema?: JsonSchema }>;
          requestBody?: { content: Record<string, { schema?: JsonSchema }> };
        }
      >
    >;
  };
  const validator = ajv();
  validator.addSchema(document as object, 'openapi.json');
  const pointer = (...segments: string[]) =>
    `openapi.json#/${segments.map((s) => encodeURIComponent(s.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/')}`;
  let schemas = 0;
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const located: Array<[string, JsonSchema, string]> = [];
      (operation.parameters ?? []).forEach((parameter, i) => {
        if (parameter.schema)
          located.push([
            `parameter ${parameter.name}`,
            parameter.schema,
            pointer('paths', path, method, 'parameters', String(i), 'schema'),
          ]);
      });
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        if (media.schema)
          located.push([
            `body ${type}`,
            media.schema,
            pointer('paths', path, method, 'requestBody', 'content', type, 'schema'),
          ]);
      }
      for (const [what, schema, at] of located) {
        const check = validator.compile({ $ref: at });
        for (const value of fc.sample(valid(schema, { root: document }), 15)) {
          t.true(
            check(value),
            `${method.toUpperCase()} ${path} ${what}: ${JSON.stringify(value)?.slice(0, 300)}: ${validator.errorsText(check.errors)}`,
          );
        }
        schemas += 1;
      }
    }
  }
  t.true(schemas >= 150, `only ${schemas} request schemas`);
  t.log(`${schemas} request schemas, 15 valid values each`);
});
