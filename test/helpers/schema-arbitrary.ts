import fc from 'fast-check';

// fast-check arbitraries derived from JSON Schema 2020-12, as the OpenAPI document publishes it:
// `valid(schema)` draws values the schema accepts, `hostile(schema)` values built to break a
// server that trusts them (a member of the wrong type, a required member dropped, an unknown
// member, numbers out of range, overlong strings, NUL, RTL overrides, 4-byte emoji, lone
// surrogates, path separators, very deep or large arrays). Nothing here is written per route: a
// schema added to the document is fuzzed as it is published.
//
// Covered: type (and type lists, the document's nullable), const, enum, format (uuid, date-time,
// email, uri, binary), pattern (fc.stringMatching), minLength/maxLength, minimum/maximum and their
// exclusive forms, items/minItems/maxItems/uniqueItems, properties/required/additionalProperties,
// anyOf/oneOf/allOf, if/then/else, not (for the enum, const, type and pattern it is published with)
// and $ref into the document (`root`).

export type JsonSchema = boolean | { [keyword: string]: unknown };
type SchemaObject = { [keyword: string]: unknown };

export type SchemaOptions = {
  /** The document a `$ref` points into (`#/components/schemas/Error`). */
  root?: unknown;
  /** Nesting beyond which optional members and extra items are left out (default 6). */
  maxDepth?: number;
  /** How many times more often an optional member is left out than drawn (default 1: half the time). */
  omitOptional?: number;
};

const JSON_TYPES = ['null', 'boolean', 'integer', 'number', 'string', 'array', 'object'] as const;
type JsonType = (typeof JSON_TYPES)[number];

/** Strings that have broken servers: control characters, bidi overrides, astral and lone surrogates, paths. */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0007\u001b[31m',
  '\r\n',
  '\ud800',
  '\udfff\ud800',
  '\ufeff',
  '\u200b',
  '\u202eevil.exe',
  'file\u202etxt.exe',
  '💥🔥',
  '👩‍👩‍👧‍👦',
  '𝕳𝖊𝖑𝖑𝖔',
  'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇',
  '../../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '/',
  '\\',
  '..',
  '.',
  '%00',
  '%2e%2e%2f',
  "'; DROP TABLE transfers; --",
  '<script>alert(1)</script>',
  `\${7*7}{{7*7}}`,
  '__proto__',
  'constructor',
  'null',
  'NaN',
  '1e309',
];

const HOSTILE_KEYS = ['__proto__', 'constructor', 'prototype', '', '\u0000', '$ref', 'id', 'a'.repeat(300), '💥'];

const isObject = (value: unknown): value is SchemaObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const codePoints = (value: string) => [...value].length;

/** The schema a local `$ref` names, with the referring schema's other keywords beside it. */
function resolved(schema: JsonSchema, options: SchemaOptions): JsonSchema {
  if (!isObject(schema) || typeof schema.$ref !== 'string') return schema;
  const { $ref, ...rest } = schema;
  if (!$ref.startsWith('#/')) throw new Error(`schema-arbitrary: only local $ref are supported, not ${$ref}`);
  let target: unknown = options.root;
  for (const segment of $ref.slice(2).split('/')) {
    const key = decodeURIComponent(segment).replaceAll('~1', '/').replaceAll('~0', '~');
    target = isObject(target) ? target[key] : undefined;
  }
  if (target === undefined) throw new Error(`schema-arbitrary: $ref ${$ref} points at nothing`);
  return resolved({ ...(target as SchemaObject), ...rest }, options);
}

/** The types a schema allows, explicit or implied by its keywords. */
function typesOf(schema: SchemaObject): JsonType[] {
  const declared = schema.type;
  if (typeof declared === 'string') return declared === 'number' ? ['number', 'integer'] : [declared as JsonType];
  if (Array.isArray(declared)) return declared as JsonType[];
  if (schema.properties || schema.required || schema.additionalProperties !== undefined) return ['object'];
  if (schema.items || schema.minItems !== undefined) return ['array'];
  if (schema.pattern || schema.format || schema.minLength !== undefined || schema.maxLength !== undefined) {
    return ['string'];
  }
  if (schema.minimum !== undefined || schema.maximum !== undefined) return ['number'];
  return [...JSON_TYPES];
}

/**
 * Whether a value satisfies the keywords a `not` or an `if` is published with here (type, const,
 * enum, pattern, properties of an object). Enough for the document; not a validator.
 */
function satisfies(schema: JsonSchema, value: unknown): boolean {
  if (typeof schema === 'boolean') return schema;
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  if (schema.type !== undefined) {
    const allowed = [schema.type].flat() as string[];
    const ok = allowed.includes(type) || (type === 'number' && allowed.includes('integer') && Number.isInteger(value));
    if (!ok) return false;
  }
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) return false;
  if (Array.isArray(schema.enum) && !schema.enum.some((v) => JSON.stringify(v) === JSON.stringify(value))) {
    return false;
  }
  if (typeof schema.pattern === 'string' && typeof value === 'string') {
    if (!new RegExp(schema.pattern, 'u').test(value)) return false;
  }
  return true;
}

function withoutKeywords(schema: SchemaObject, ...keywords: string[]): SchemaObject {
  const copy = { ...schema };
  for (const keyword of keywords) delete copy[keyword];
  return copy;
}

/** A shallow merge of two schemas (allOf, if + then): properties and required lists combined. */
function merged(a: JsonSchema, b: JsonSchema): JsonSchema {
  if (typeof a === 'boolean' || typeof b === 'boolean') return a === false || b === false ? false : a === true ? b : a;
  const out: SchemaObject = { ...a, ...b };
  if (isObject(a.properties) || isObject(b.properties))
    out.properties = { ...(a.properties as object), ...(b.properties as object) };
  if (Array.isArray(a.required) || Array.isArray(b.required)) {
    out.required = [...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])])];
  }
  return out;
}

// ---------------------------------------------------------------------------
// valid

/** Values the schema accepts. */
export function valid(schema: JsonSchema, options: SchemaOptions = {}): fc.Arbitrary<unknown> {
  return validAt(schema, options, 0);
}

function validAt(input: JsonSchema, options: SchemaOptions, depth: number): fc.Arbitrary<unknown> {
  const schema = resolved(input, options);
  if (schema === true) return fc.jsonValue({ maxDepth: 2 });
  if (schema === false) throw new Error('schema-arbitrary: no value satisfies `false`');
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  if (Array.isArray(schema.allOf)) {
    const { allOf, ...rest } = schema;
    return validAt((allOf as JsonSchema[]).reduce(merged, rest), options, depth);
  }
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = schema[keyword];
    if (Array.isArray(branches)) {
      const rest = withoutKeywords(schema, keyword);
      return fc.oneof(...(branches as JsonSchema[]).map((branch) => validAt(merged(rest, branch), options, depth)));
    }
  }
  if (schema.if !== undefined) {
    const rest = withoutKeywords(schema, 'if', 'then', 'else');
    const condition = schema.if as JsonSchema;
    const then = merged(merged(rest, condition), (schema.then as JsonSchema | undefined) ?? true);
    const otherwise = validAt(merged(rest, (schema.else as JsonSchema | undefined) ?? true), options, depth).filter(
      (value) => !satisfies(condition, value),
    );
    return fc.oneof({ weight: 3, arbitrary: validAt(then, options, depth) }, { weight: 1, arbitrary: otherwise });
  }
  if (schema.not !== undefined) {
    const forbidden = schema.not as JsonSchema;
    return validAt(withoutKeywords(schema, 'not'), options, depth).filter((value) => !satisfies(forbidden, value));
  }
  const types = typesOf(schema);
  return fc.oneof(...types.map((type) => validOfType(type, schema, options, depth)));
}

function validOfType(
  type: JsonType,
  schema: SchemaObject,
  options: SchemaOptions,
  depth: number,
): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number':
      return validNumber(schema, type === 'integer');
    case 'string':
      return validString(schema);
    case 'array':
      return validArray(schema, options, depth);
    case 'object':
      return validObject(schema, options, depth);
  }
}

type Bounds = { min: number; max: number; minExcluded: boolean; maxExcluded: boolean };

function boundsOf(schema: SchemaObject, integer: boolean): Bounds {
  const limit = integer ? Number.MAX_SAFE_INTEGER : 1e12;
  const num = (value: unknown) => (typeof value === 'number' ? value : undefined);
  const exclusiveMin = num(schema.exclusiveMinimum);
  const exclusiveMax = num(schema.exclusiveMaximum);
  const min = exclusiveMin ?? num(schema.minimum) ?? -limit;
  const max = exclusiveMax ?? num(schema.maximum) ?? limit;
  return { min, max, minExcluded: exclusiveMin !== undefined, maxExcluded: exclusiveMax !== undefined };
}

function validNumber(schema: SchemaObject, integer: boolean): fc.Arbitrary<number> {
  const { min, max, minExcluded, maxExcluded } = boundsOf(schema, integer);
  if (integer) {
    const low = Math.ceil(minExcluded && Number.isInteger(min) ? min + 1 : min);
    const high = Math.floor(maxExcluded && Number.isInteger(max) ? max - 1 : max);
    // Near the bounds and small values too: the edges are where servers err.
    const anyInRange =
      low >= -(2 ** 31) && high < 2 ** 31
        ? fc.integer({ min: low, max: high })
        : fc.bigInt({ min: BigInt(low), max: BigInt(high) }).map(Number);
    return fc.oneof(anyInRange, fc.constantFrom(...[low, high, 0, 1].filter((n) => n >= low && n <= high)));
  }
  return fc.double({ min, max, minExcluded, maxExcluded, noNaN: true, noDefaultInfinity: true });
}

function validString(schema: SchemaObject): fc.Arbitrary<string> {
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
  const fits = (value: string) => {
    const length = codePoints(value);
    return length >= minLength && (maxLength === undefined || length <= maxLength);
  };
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
  let base: fc.Arbitrary<string>;
  switch (schema.format) {
    case 'uuid':
      base = fc.uuid();
      break;
    case 'date-time':
      base = fc
        .date({ min: new Date('1971-01-01T00:00:00Z'), max: new Date('2199-12-31T23:59:59Z'), noInvalidDate: true })
        .map((date) => date.toISOString());
      break;
    case 'email':
      // ajv-formats' and most servers' idea of an address: a plain local part, a dotted domain.
      base = fc
        .tuple(fc.stringMatching(/^[a-z0-9]{1,8}([._+-][a-z0-9]{1,8}){0,2}$/), fc.domain())
        .map(([local, domain]) => `${local}@${domain}`);
      break;
    case 'uri':
      base = fc.webUrl({ withQueryParameters: true });
      break;
    default: {
      const length = { minLength, maxLength: Math.min(maxLength ?? minLength + 40, minLength + 40) };
      base = pattern
        ? fc.stringMatching(pattern)
        : fc.oneof(
            { weight: 3, arbitrary: fc.string(length) },
            { weight: 1, arbitrary: fc.string({ ...length, unit: 'grapheme' }) },
            { weight: 1, arbitrary: fc.string({ ...length, unit: 'binary' }) },
          );
    }
  }
  return base.filter((value) => fits(value) && (!pattern || pattern.test(value)));
}

function validArray(schema: SchemaObject, options: SchemaOptions, depth: number): fc.Arbitrary<unknown[]> {
  const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const cap = depth >= (options.maxDepth ?? 6) ? minLength : minLength + 4;
  const maxLength = Math.min(typeof schema.maxItems === 'number' ? schema.maxItems : cap, cap);
  const item = validAt((schema.items as JsonSchema | undefined) ?? true, options, depth + 1);
  return schema.uniqueItems === true
    ? fc.uniqueArray(item, { minLength, maxLength, selector: (value) => JSON.stringify(value) })
    : fc.array(item, { minLength, maxLength });
}

function validObject(schema: SchemaObject, options: SchemaOptions, depth: number): fc.Arbitrary<object> {
  const properties = (isObject(schema.properties) ? schema.properties : {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const deep = depth >= (options.maxDepth ?? 6);
  const members: Record<string, fc.Arbitrary<unknown>> = {};
  const absent = Symbol('absent');
  for (const [name, child] of Object.entries(properties)) {
    if (deep && !required.has(name)) continue;
    const value = validAt(child, options, depth + 1);
    members[name] = required.has(name)
      ? value
      : fc.oneof(
          { weight: options.omitOptional ?? 1, arbitrary: fc.constant(absent) },
          { weight: 1, arbitrary: value },
        );
  }
  const known = fc
    .record(members)
    .map((drawn) => Object.fromEntries(Object.entries(drawn).filter(([, value]) => value !== absent)));
  const additional = schema.additionalProperties;
  if (additional === false || additional === undefined || deep) return known;
  // Extra members a map (additionalProperties: schema) or an open object (true) accepts.
  const extra = fc.dictionary(
    fc.string({ minLength: 1, maxLength: 12 }).filter((key) => !(key in properties)),
    validAt(additional as JsonSchema, options, depth + 1),
    { maxKeys: 3 },
  );
  return fc.tuple(known, extra).map(([own, more]) => ({ ...more, ...own }));
}

// ---------------------------------------------------------------------------
// hostile

/** Values built to break what trusts the schema: mostly invalid, sometimes valid with hostile content. */
export function hostile(schema: JsonSchema, options: SchemaOptions = {}): fc.Arbitrary<unknown> {
  return hostileAt(schema, options, 0);
}

const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  // Lone surrogates and NULs inside ordinary text.
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.string({ maxLength: 10 }),
        fc.constantFrom('\ud800', '\udc00', '\u0000', '\u202e', '🚀'),
        fc.string({ maxLength: 10 }),
      )
      .map((parts) => parts.join('')),
  },
);

/** Strings far past any limit the document publishes (maxLength is at most a few thousand). */
const overlongString = (maxLength: number | undefined) =>
  fc.oneof(
    fc.constant('x'.repeat((maxLength ?? 255) + 1)),
    fc.integer({ min: 1, max: 4 }).map((n) => '💥'.repeat((maxLength ?? 1_000) + n)),
    fc.integer({ min: 10_000, max: 200_000 }).map((n) => 'A'.repeat(n)),
  );

/** A value of a type the schema does not allow (or any odd value when it allows every type). */
function wrongType(schema: SchemaObject): fc.Arbitrary<unknown> {
  const allowed = new Set<string>(typesOf(schema));
  const samples: Array<[JsonType, unknown[]]> = [
    ['null', [null]],
    ['boolean', [true, false]],
    ['integer', [0, -1, 2 ** 31, Number.MAX_SAFE_INTEGER + 2]],
    ['number', [0.5, -1e308, 1e-300]],
    ['string', ['', 'true', '1', 'null', '{}']],
    ['array', [[], [null], ['x']]],
    ['object', [{}, { '': null }, JSON.parse('{"__proto__":{"admin":true}}')]],
  ];
  const wrong = samples.filter(([type]) => !allowed.has(type) && !(type === 'integer' && allowed.has('number')));
  const values = wrong.flatMap(([, values]) => values);
  return values.length > 0 ? fc.constantFrom(...values) : fc.constantFrom(null, '', [], {}, 0);
}

/** Deep nesting and large arrays: parsers, validators and JSON columns that recurse. */
const deepValue = fc.oneof(
  fc.integer({ min: 200, max: 1_000 }).map((n) => {
    let value: unknown = 1;
    for (let i = 0; i < n; i++) value = [value];
    return value;
  }),
  fc.integer({ min: 100, max: 1_000 }).map((n) => {
    let value: unknown = {};
    for (let i = 0; i < n; i++) value = { a: value };
    return value;
  }),
  fc.integer({ min: 1_000, max: 50_000 }).map((n) => Array.from({ length: n }, (_, i) => i)),
);

function hostileAt(input: JsonSchema, options: SchemaOptions, depth: number): fc.Arbitrary<unknown> {
  const schema = resolved(input, options);
  if (typeof schema === 'boolean') return fc.oneof(hostileString, deepValue);
  const mutations: Array<{ weight: number; arbitrary: fc.Arbitrary<unknown> }> = [
    { weight: 3, arbitrary: wrongType(schema) },
    { weight: 1, arbitrary: hostileString },
  ];
  if (Array.isArray(schema.enum) || 'const' in schema) {
    mutations.push({ weight: 2, arbitrary: fc.constantFrom('', 'other', 'UPPER', '\u0000') });
  }
  const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (branches) {
    for (const branch of branches) mutations.push({ weight: 2, arbitrary: hostileAt(branch, options, depth) });
  }
  const types = Array.isArray(schema.enum) || 'const' in schema ? [] : typesOf(schema);
  if (types.includes('string')) mutations.push({ weight: 4, arbitrary: hostileOfString(schema) });
  if (types.includes('integer') || types.includes('number')) {
    mutations.push({ weight: 4, arbitrary: hostileOfNumber(schema, !types.includes('number')) });
  }
  if (types.includes('array')) mutations.push({ weight: 4, arbitrary: hostileOfArray(schema, options, depth) });
  if (types.includes('object') && (schema.properties || schema.additionalProperties)) {
    mutations.push({ weight: 6, arbitrary: hostileOfObject(schema, options, depth) });
  }
  if (depth === 0) mutations.push({ weight: 1, arbitrary: deepValue });
  return fc.oneof(...mutations);
}

function hostileOfString(schema: SchemaObject): fc.Arbitrary<string> {
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const formatBreakers: Record<string, string[]> = {
    uuid: [
      'not-a-uuid',
      '00000000-0000-0000-0000-00000000000',
      '{00000000-0000-0000-0000-000000000000}',
      'ZZZZZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZZZZZZZZZ',
    ],
    'date-time': [
      '2026-02-30T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '+275760-09-13T00:00:00Z',
      '-271821-04-20T00:00:00Z',
      'now',
      '0',
    ],
    email: ['@', 'a@', '@b.c', 'a@b', 'a b@c.d', `${'a'.repeat(300)}@example.com`, 'a@b.c\u0000'],
    uri: ['javascript:alert(1)', 'http://', 'file:///etc/passwd', '//x', 'http://[::1', 'http://127.0.0.1:0/'],
  };
  const options: fc.Arbitrary<string>[] = [hostileString, overlongString(maxLength)];
  if (minLength > 0) options.push(fc.constant('x'.repeat(minLength - 1)));
  const breakers = formatBreakers[String(schema.format)];
  if (breakers) options.push(fc.constantFrom(...breakers));
  if (typeof schema.pattern === 'string') {
    // A valid value with hostile characters spliced into it: fails any anchored pattern.
    const pattern = new RegExp(schema.pattern, 'u');
    options.push(
      fc
        .tuple(fc.stringMatching(pattern), fc.constantFrom('\u0000', '\u202e', '/', '../', '🚀', '\ud800', ' '))
        .map(([value, splice]) => `${value.slice(0, 3)}${splice}${value.slice(3)}`),
    );
  }
  return fc.oneof(...options);
}

function hostileOfNumber(schema: SchemaObject, integer: boolean): fc.Arbitrary<number> {
  const { min, max } = boundsOf(schema, integer);
  const values = [-1, -0, 1e308, -1e308, 2 ** 53 + 2, 2 ** 63, 1e-320];
  if (Number.isFinite(min)) values.push(min - 1, min - 0.5);
  if (Number.isFinite(max)) values.push(max + 1, max + 0.5, max * 1000);
  if (integer) values.push(0.5, 1.5, 2.5);
  return fc.constantFrom(...values);
}

function hostileOfArray(schema: SchemaObject, options: SchemaOptions, depth: number): fc.Arbitrary<unknown[]> {
  const item = (schema.items as JsonSchema | undefined) ?? true;
  const minItems = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : undefined;
  const variants: fc.Arbitrary<unknown[]>[] = [
    // One item hostile among valid ones.
    fc
      .tuple(fc.array(validAt(item, options, depth + 1), { maxLength: 3 }), hostileAt(item, options, depth + 1))
      .map(([items, bad]) => [...items, bad]),
    // Past maxItems (or very long when there is none).
    fc
      .constant(maxItems)
      .chain((limit) =>
        fc.array(validAt(item, options, depth + 1), { minLength: (limit ?? 200) + 1, maxLength: (limit ?? 200) + 2 }),
      ),
  ];
  if (minItems > 0) variants.push(fc.array(validAt(item, options, depth + 1), { maxLength: minItems - 1 }));
  if (schema.uniqueItems === true) {
    variants.push(validAt(item, options, depth + 1).map((value) => [value, value]));
  }
  return fc.oneof(...variants);
}

function hostileOfObject(schema: SchemaObject, options: SchemaOptions, depth: number): fc.Arbitrary<unknown> {
  const properties = (isObject(schema.properties) ? schema.properties : {}) as Record<string, JsonSchema>;
  const names = Object.keys(properties);
  const required = ((schema.required as string[] | undefined) ?? []).filter((name) => name in properties);
  const base = validObject(schema, options, depth) as fc.Arbitrary<Record<string, unknown>>;
  const variants: fc.Arbitrary<unknown>[] = [
    // An unknown member, with a name that has broken object handling.
    fc
      .tuple(base, fc.constantFrom(...HOSTILE_KEYS), fc.jsonValue({ maxDepth: 2 }))
      .map(([value, key, extra]) => Object.defineProperty({ ...value }, key, { value: extra, enumerable: true })),
  ];
  if (required.length > 0) {
    variants.push(
      fc.tuple(base, fc.constantFrom(...required)).map(([value, name]) => {
        const copy = { ...value };
        delete copy[name];
        return copy;
      }),
    );
  }
  if (names.length > 0) {
    // One member mutated (recursively hostile), the others valid.
    variants.push(
      fc
        .constantFrom(...names)
        .chain((name) =>
          fc
            .tuple(base, hostileAt(properties[name] ?? true, options, depth + 1))
            .map(([value, bad]) => ({ ...value, [name]: bad })),
        ),
    );
  }
  return fc.oneof(...variants);
}
