import type { Server } from '@hapi/hapi';
import Joi from 'joi';
import joiToJsonModule from 'joi-to-json';
import { errorEnvelope } from './schemas.ts';
import { API_REVISION, OPENAPI_DOCUMENT_VERSION } from './version.ts';

// The OpenAPI 3.1 document is derived from the routes' own joi schemas, so it
// cannot drift from what the server validates.

type JsonSchema = Record<string, unknown>;
type Operation = Record<string, unknown>;

// joi-to-json is CommonJS (`module.exports = parse`), which its typings describe as an ES default export.
const joiToJson = joiToJsonModule as unknown as (schema: Joi.Schema, mode: string) => JsonSchema;
const toSchema = (schema: Joi.Schema): JsonSchema =>
  withPatternProperties(schema.describe(), joiToJson(schema, 'open-api-3.1'));

type Description = {
  type?: string;
  keys?: Record<string, Description>;
  items?: Description[];
  patterns?: Array<{ schema?: Description; regex?: string; rule: Description }>;
};

/**
 * joi-to-json drops `object().pattern(Joi.string(), value)` (a map: any key, typed values) and
 * lists a regex pattern as if it were a property name. Walks the joi description beside the JSON
 * schema and writes maps as `additionalProperties`, which is what a reader or type generator needs.
 */
function withPatternProperties(description: Description, json: JsonSchema): JsonSchema {
  const properties = json.properties as Record<string, JsonSchema> | undefined;
  for (const [key, child] of Object.entries(description.keys ?? {})) {
    const property = properties?.[key];
    if (property) withPatternProperties(child, property);
  }
  const [item] = description.items ?? [];
  if (item && json.items && typeof json.items === 'object') withPatternProperties(item, json.items as JsonSchema);
  for (const pattern of description.patterns ?? []) {
    if (pattern.regex !== undefined) delete properties?.[pattern.regex];
    else if (pattern.schema) json.additionalProperties = toSchema(Joi.build(pattern.rule));
  }
  return json;
}

export function buildOpenApiDocument(server: Server) {
  const paths: Record<string, Record<string, Operation>> = {};
  for (const route of server.table()) {
    const settings = route.settings;
    if (!settings.tags?.includes('api')) continue;
    const valise = settings.plugins?.valise;
    const validate = settings.validate as { params?: Joi.ObjectSchema; query?: Joi.ObjectSchema; payload?: Joi.Schema };
    const operation: Operation = {
      summary: settings.description,
      description: settings.notes,
      tags: settings.tags.filter((t) => t !== 'api'),
      parameters: [...parameters(validate.params, 'path'), ...parameters(validate.query, 'query')],
      responses: responses(settings.response as ResponseSettings | undefined),
    };
    if ((settings.auth as unknown) !== false) operation.security = [{ bearer: [] }];
    if (valise?.scope) operation['x-required-scope'] = valise.scope;
    if (validate.payload && typeof validate.payload === 'object' && 'describe' in validate.payload) {
      operation.requestBody = { content: { 'application/json': { schema: toSchema(validate.payload) } } };
    }
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, Operation>)[route.method] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Valise API',
      version: OPENAPI_DOCUMENT_VERSION,
      description: `Encrypted file transfer. Contract revision ${API_REVISION}.`,
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key: svc_live_…, svc_test_…' },
      },
      schemas: { Error: toSchema(errorEnvelope) },
    },
  };
}

type ResponseSettings = { schema?: Joi.Schema; status?: Record<string, Joi.Schema> };

function responses(settings: ResponseSettings | undefined) {
  const out: Record<string, unknown> = {
    default: {
      description: 'Error',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    },
  };
  const statuses = { ...(settings?.status ?? {}) };
  if (settings?.schema) statuses['200'] = settings.schema;
  if (Object.keys(statuses).length === 0) out['200'] = { description: 'OK' };
  for (const [status, schema] of Object.entries(statuses)) {
    out[status] = { description: 'OK', content: { 'application/json': { schema: toSchema(schema) } } };
  }
  return out;
}

function parameters(schema: Joi.ObjectSchema | undefined, where: 'path' | 'query') {
  if (!schema || typeof schema.describe !== 'function') return [];
  const json = toSchema(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    schema: property,
  }));
}
