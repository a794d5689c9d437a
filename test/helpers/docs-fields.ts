import { readdir, readFile } from 'node:fs/promises';
import type { JsonSchema, OpenApiDocument } from '../../sdk/scripts/openapi-document.ts';

// The field tables of docs/*.md, each tied to the part of the OpenAPI document it describes by an HTML
// comment on the line before it (docs/conventions.md, "Field tables"):
//
//   <!-- openapi: POST /v1/transfers request -->                   the JSON body of an operation
//   <!-- openapi: GET /v1/intakes/{id} 200 -->                      a success response's body
//   <!-- openapi: POST /v1/intakes/{id}/submissions 201 upload_urls[] -->   a member of one: `.`
//                                                                    between names, `[]` for an array's items
//
// The first column names the fields (several per row: "`id`, `object`"), an optional Type column their
// types. Both are compared with the schema: no field the schema lacks, no property the table lacks.

export const DOCS_DIRECTORY = new URL('../../docs/', import.meta.url);

export type Tie = { method: string; path: string; part: 'request' | number; pointer: string[] };

export type FieldTable = {
  file: string;
  line: number;
  tie: Tie | null;
  header: string[];
  rows: Array<{ line: number; cells: string[] }>;
};

const TIE = /^<!--\s*openapi:\s*(GET|POST|PUT|PATCH|DELETE)\s+(\S+)\s+(request|[1-5]\d\d)(?:\s+(\S+))?\s*-->$/;

const cellsOf = (line: string) =>
  line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());

/** Every table of the docs whose first header cell is `Field`, or that carries a tie, with its tie. */
export async function readFieldTables(exclude: readonly string[] = []): Promise<FieldTable[]> {
  const tables: FieldTable[] = [];
  const files = (await readdir(DOCS_DIRECTORY)).filter((f) => f.endsWith('.md') && !exclude.includes(f)).sort();
  for (const file of files) {
    const lines = (await readFile(new URL(file, DOCS_DIRECTORY), 'utf8')).split('\n');
    let pendingTie: { tie: Tie | null; line: number } | null = null;
    let fenced = false;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]?.trim() ?? '';
      // Examples in code blocks (a tie shown in docs/conventions.md) are not ties.
      if (line.startsWith('```')) fenced = !fenced;
      if (fenced || line.startsWith('```')) continue;
      if (line.startsWith('<!--') && line.includes('openapi:')) {
        const match = TIE.exec(line);
        if (!match)
          throw new Error(`docs/${file}:${i + 1}: a tie reads <!-- openapi: METHOD /path request|STATUS [member] -->`);
        const [, method = '', path = '', part = '', pointer] = match;
        const tie = {
          method,
          path,
          part: part === 'request' ? ('request' as const) : Number(part),
          // `.` between names, but not before a digit: `…:enterprise:2.0:User` is one name.
          pointer: pointer ? pointer.split(/\.(?!\d)/) : [],
        };
        pendingTie = { tie, line: i + 1 };
        continue;
      }
      const isTable = line.startsWith('|') && /^\|[\s:|-]+\|$/.test(lines[i + 1]?.trim() ?? '');
      if (isTable) {
        const header = cellsOf(line);
        const tie = pendingTie?.tie ?? null;
        if (tie || header[0]?.toLowerCase() === 'field') {
          const rows: FieldTable['rows'] = [];
          let j = i + 2;
          for (; j < lines.length && lines[j]?.trim().startsWith('|'); j++) {
            rows.push({ line: j + 1, cells: cellsOf(lines[j] ?? '') });
          }
          tables.push({ file, line: i + 1, tie, header, rows });
          i = j - 1;
        }
        pendingTie = null;
        continue;
      }
      if (line !== '' && pendingTie) {
        throw new Error(`docs/${file}:${pendingTie.line}: a tie must be followed by its table`);
      }
    }
  }
  return tables;
}

/** The names a first-column cell gives: "`id`, `object` (`recipient`)" is id and object. */
export function fieldNames(cell: string): string[] {
  return cell
    .replace(/\([^)]*\)/g, '')
    .split(',')
    .map((name) => name.replaceAll('`', '').trim())
    .filter((name) => name !== '');
}

/** The schema a tie points at, or a reason it points at nothing. */
export function resolveTie(document: OpenApiDocument, tie: Tie): JsonSchema | string {
  const operation = document.paths[tie.path]?.[tie.method.toLowerCase()];
  if (!operation) return `${tie.method} ${tie.path} is not in the OpenAPI document`;
  type Content = Record<string, { schema: JsonSchema }>;
  // An error response is shared (`$ref` to components/responses), its schema too (components/schemas).
  const shared = (document.components as { responses?: Record<string, { content?: Content }> }).responses ?? {};
  const answer = tie.part === 'request' ? undefined : operation.responses[String(tie.part)];
  const ref = (answer as { $ref?: string } | undefined)?.$ref;
  const content: Content | undefined =
    tie.part === 'request'
      ? operation.requestBody?.content
      : ref
        ? shared[ref.split('/').pop() ?? '']?.content
        : answer?.content;
  // The operation's JSON, `application/json` or a `+json` type of its own (`application/scim+json`).
  let body = Object.entries(content ?? {}).find(([type]) => /^application\/(?:[\w.-]+\+)?json$/.test(type))?.[1]
    ?.schema;
  if (body?.$ref) body = document.components.schemas[body.$ref.split('/').pop() ?? ''];
  if (!body)
    return `${tie.method} ${tie.path} has no JSON ${tie.part === 'request' ? 'request body' : `${tie.part} response`}`;
  let schema: JsonSchema = body;
  for (const step of tie.pointer) {
    const name = step.replace(/\[\]$/, '');
    const member: JsonSchema | undefined = propertiesOf(schema)[name];
    if (!member) return `${tie.method} ${tie.path}: no member ${name}`;
    schema = member;
    if (step.endsWith('[]')) {
      const items = alternatives(schema).find((s) => s.items)?.items;
      if (!items) return `${tie.method} ${tie.path}: ${name} is not an array`;
      schema = items;
    }
  }
  return schema;
}

/** A schema and those it combines: `anyOf`, `oneOf`, `allOf`, and the branches of an `if`. */
function alternatives(schema: JsonSchema): JsonSchema[] {
  const branches = [schema.then, schema.else].filter((s): s is JsonSchema => typeof s === 'object' && s !== null);
  const nested = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? []), ...branches];
  return [schema, ...nested.flatMap(alternatives)];
}

/** The properties of an object schema, across its alternatives (`anyOf` of an object and null…). */
export function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
  return Object.assign({}, ...alternatives(schema).map((s) => s.properties ?? {}));
}

export type TypeSet = { types: Set<string>; nullable: boolean; literals: string[] };

/** The JSON types a schema allows. */
export function schemaTypes(schema: JsonSchema): TypeSet {
  const types = new Set<string>();
  let nullable = false;
  const literals: string[] = [];
  for (const s of alternatives(schema)) {
    for (const type of Array.isArray(s.type) ? s.type : s.type ? [s.type] : []) {
      if (type === 'null') nullable = true;
      else types.add(type);
    }
    for (const value of [...(s.enum ?? []), ...('const' in s ? [s.const] : [])]) {
      if (value === null) nullable = true;
      else {
        types.add(Number.isInteger(value) ? 'integer' : typeof value);
        literals.push(String(value));
      }
    }
  }
  return { types, nullable, literals };
}

const WORDS: Record<string, string> = {
  string: 'string',
  uuid: 'string',
  'date-time': 'string',
  uri: 'string',
  url: 'string',
  'e-mail': 'string',
  integer: 'integer',
  number: 'number',
  boolean: 'boolean',
  object: 'object',
  array: 'array',
  map: 'object',
};

/** The types a Type cell names: "string or null", "integer ≥ 1", "e-mail[]", "`server` or `e2e`". */
export function docTypes(cell: string): TypeSet {
  const literals = [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1] ?? '');
  const words = cell
    .replace(/`[^`]*`/g, ' ')
    .replace(/\([^)]*\)/g, ' ')
    .toLowerCase()
    .split(/[\s,]+/);
  const types = new Set<string>();
  let nullable = false;
  for (const word of words) {
    if (word === 'null') nullable = true;
    else if (word.endsWith('[]')) types.add('array');
    else if (WORDS[word]) types.add(WORDS[word]);
  }
  if (types.size === 0 && literals.length > 0) types.add('string');
  return { types, nullable, literals };
}

/** What disagrees between a table and the schema it is tied to; empty when they agree. */
export function compareTable(table: FieldTable, schema: JsonSchema): string[] {
  const where = (line: number) => `docs/${table.file}:${line}`;
  const problems: string[] = [];
  const properties = propertiesOf(schema);
  const typeColumn = table.header.findIndex((h) => h.toLowerCase() === 'type');
  const documented = new Set<string>();
  for (const row of table.rows) {
    for (const name of fieldNames(row.cells[0] ?? '')) {
      documented.add(name);
      const property = properties[name];
      if (!property) {
        problems.push(`${where(row.line)}: \`${name}\` is not a field of the API's schema`);
        continue;
      }
      if (typeColumn < 0) continue;
      const doc = docTypes(row.cells[typeColumn] ?? '');
      const api = schemaTypes(property);
      const said = [...doc.types].sort().join('|');
      const is = [...api.types].sort().join('|');
      if (said !== is)
        problems.push(`${where(row.line)}: \`${name}\` is documented as ${said || '?'}, the API says ${is}`);
      if (doc.nullable !== api.nullable) {
        problems.push(
          `${where(row.line)}: \`${name}\` is ${api.nullable ? '' : 'not '}nullable in the API, the docs say ${doc.nullable ? '' : 'not '}"or null"`,
        );
      }
      const unknown = api.literals.length > 0 ? doc.literals.filter((l) => !api.literals.includes(l)) : [];
      if (unknown.length > 0) problems.push(`${where(row.line)}: \`${name}\` takes no ${unknown.join(', ')}`);
    }
  }
  for (const name of Object.keys(properties)) {
    if (!documented.has(name)) problems.push(`${where(table.line)}: the API's \`${name}\` is missing from the table`);
  }
  return problems;
}
