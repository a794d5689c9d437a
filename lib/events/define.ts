import { z } from 'zod';

// How an event type is declared, and how its zod payload schema becomes the
// JSON Schema the catalog serves. The zod schema is the one definition: the
// emitter's type (`EventData<T>`), the served `data_schema`, docs/events.md
// and the SDK's event union are all derived from it.
//
// The served schemas keep to a small subset of JSON Schema draft 2020-12
// (object, string, integer, boolean, null, array, enum, pattern, format,
// minimum), inline, without $ref, so that any consumer can read them without
// a resolver. No schema forbids additional members: adding a member is a
// compatible change.

export type JsonType = 'object' | 'string' | 'integer' | 'number' | 'boolean' | 'null' | 'array';

export type JsonSchema = {
  $schema?: string;
  title?: string;
  description?: string;
  type: JsonType | readonly JsonType[];
  format?: 'date-time' | 'uuid' | 'email';
  pattern?: string;
  enum?: readonly (string | null)[];
  minimum?: number;
  items?: JsonSchema;
  properties?: Readonly<Record<string, JsonSchema>>;
  required?: readonly string[];
};

export type EventDeclaration<Data extends z.ZodObject = z.ZodObject> = {
  description: string;
  /** True when this codebase records the event today; false for a planned type. */
  emitted: boolean;
  data: Data;
};

/** An event type's declaration: its payload's members, all required unless marked `.optional()`. */
export function event<const Shape extends z.ZodRawShape>(
  description: string,
  data: Shape,
  options: { emitted?: boolean } = {},
): EventDeclaration<z.ZodObject<Shape>> {
  return { description, emitted: options.emitted ?? false, data: z.object(data) };
}

export const EMITTED = { emitted: true } as const;

/** A shared view of a resource: its title names it in docs/events.md, wherever a payload embeds it. */
export function view<const Shape extends z.ZodRawShape>(title: string, description: string, shape: Shape) {
  return z.object(shape).meta({ title, description });
}

// The keywords the catalog's subset allows, in the order the served schemas spell them.
const KEYWORDS = [
  '$schema',
  'title',
  'type',
  'description',
  'format',
  'pattern',
  'enum',
  'minimum',
  'items',
  'properties',
  'required',
] as const;

/** The catalog's JSON Schema of a zod schema (draft 2020-12, the input side: what an emitter writes). */
export function catalogSchema(schema: z.ZodType, title?: string): JsonSchema {
  const { $schema, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'throw' });
  return { $schema, ...(title ? { title } : {}), ...(subset(rest, '$') as Omit<JsonSchema, '$schema'>) };
}

type Node = Record<string, unknown>;

/**
 * Rewrites what zod writes into the catalog's subset, meaning the same thing:
 * `anyOf: [X, {type: null}]` becomes X with `null` added to its type (and enum);
 * the regular expressions zod adds beside a `format`, the safe-integer bounds of
 * `z.int()` and the "any member" spelling of a record are dropped. Anything else
 * outside the subset throws, so a schema the catalog cannot serve fails at load.
 */
function subset(node: Node, at: string): Node {
  const { anyOf, ...own } = node;
  if (anyOf) return subset(withNull(own, anyOf as Node[], at), at);
  if (own.format !== undefined) delete own.pattern;
  if (own.minimum === Number.MIN_SAFE_INTEGER) delete own.minimum;
  if (own.maximum === Number.MAX_SAFE_INTEGER) delete own.maximum;
  if (isEmpty(own.additionalProperties)) delete own.additionalProperties;
  if ((own.propertyNames as Node | undefined)?.type === 'string') delete own.propertyNames;
  const unknown = Object.keys(own).filter((key) => !(KEYWORDS as readonly string[]).includes(key));
  if (unknown.length > 0) throw new Error(`event catalog: ${at} uses ${unknown.join(', ')}, outside the subset`);
  const out: Node = {};
  for (const key of KEYWORDS) {
    const value = own[key];
    if (value === undefined) continue;
    if (key === 'items') out[key] = subset(value as Node, `${at}[]`);
    else if (key === 'properties') {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, Node>).map(([name, member]) => [name, subset(member, `${at}.${name}`)]),
      );
    } else out[key] = value;
  }
  return out;
}

function withNull(outer: Node, anyOf: Node[], at: string): Node {
  const inner = anyOf.filter((member) => member.type !== 'null');
  const [only] = inner;
  if (inner.length !== 1 || anyOf.length !== 2 || !only) throw new Error(`event catalog: ${at} is a union`);
  const types = Array.isArray(only.type) ? only.type : [only.type];
  return {
    ...only,
    ...outer,
    type: [...types, 'null'],
    ...(only.enum ? { enum: [...(only.enum as unknown[]), null] } : {}),
  };
}

const isEmpty = (value: unknown) =>
  typeof value === 'object' && value !== null && Object.keys(value as object).length === 0;
