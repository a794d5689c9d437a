import type { Request, Server } from '@hapi/hapi';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildOpenApiDocument } from '../../api/openapi.ts';

// A validator built from the OpenAPI document, checking real traffic: what a validating proxy
// (prism, an API gateway) would check, in process. Every exchange the server has with a client is
// held against the document:
// - the answer's status is one the operation documents, and its JSON body (success or error
//   envelope) validates against that status's schema (JSON Schema 2020-12, ajv);
// - a request the server accepted (status below 400) validates too: path and query parameters,
//   the body's media type and its JSON. A request the server refused may be invalid by design
//   (the fuzz and validation tests send such), so only its answer is checked.
// A violation is a disagreement between the document and the server; which side is wrong is for
// the reader to decide.

// ajv-formats is CommonJS (`module.exports = formatsPlugin`), which its typings describe as an ES default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type JsonSchema = Record<string, unknown>;
type Parameter = { name: string; in: string; required?: boolean; schema?: JsonSchema; $ref?: string };
type MediaTypes = Record<string, { schema?: JsonSchema }>;
type Response = { $ref?: string; description?: string; content?: MediaTypes };
type Operation = {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: MediaTypes };
  responses: Record<string, Response>;
};
export type OpenApiDocument = {
  paths: Record<string, Record<string, Operation>>;
  components: { responses?: Record<string, Response>; parameters?: Record<string, Parameter> };
};

export type Exchange = {
  method: string;
  /** The path, without the query. */
  path: string;
  query: Record<string, string | string[]>;
  requestContentType?: string | undefined;
  /** The parsed JSON body, or undefined when the request has none or is not JSON. */
  requestBody?: unknown;
  /** Whether the request carried a body at all. */
  hasRequestBody?: boolean;
  status: number;
  responseContentType?: string | undefined;
  /** The JSON answer, or undefined when it is not JSON. */
  responseBody?: unknown;
};

type CompiledOperation = {
  key: string;
  pattern: RegExp;
  names: string[];
  literalSegments: number;
  operation: Operation;
  pointer: string;
  params: Record<'path' | 'query', ValidateFunction>;
};

const mediaType = (header: string | undefined) => header?.split(';')[0]?.trim().toLowerCase() || undefined;
/** JSON, under its own name or another's (`application/scim+json`, RFC 6839's `+json` suffix). */
const isJson = (type: string | undefined) => type !== undefined && /^application\/(?:[\w.-]+\+)?json$/.test(type);
const pointerSegment = (segment: string) => encodeURIComponent(segment.replaceAll('~', '~0').replaceAll('/', '~1'));

export function createOpenApiValidator(document: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  // Parameters arrive as strings: coerced to their schema's type, as a proxy does.
  const coercing = new Ajv2020({ strict: false, allErrors: true, coerceTypes: 'array' });
  addFormats(coercing);
  ajv.addSchema(document as object, 'openapi.json');

  const compiled: CompiledOperation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    const names: string[] = [];
    const pattern = new RegExp(
      `^${path
        .split('/')
        .map((segment) => {
          const name = /^\{(\w+)\}$/.exec(segment)?.[1];
          if (!name) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          names.push(name);
          return '([^/]+)';
        })
        .join('/')}$`,
    );
    for (const [method, operation] of Object.entries(methods)) {
      const parameters = (operation.parameters ?? []).map((p) =>
        p.$ref ? (document.components.parameters?.[p.$ref.split('/').pop() ?? ''] ?? p) : p,
      );
      const params = (where: 'path' | 'query') => {
        const own = parameters.filter((p) => p.in === where);
        return coercing.compile({
          type: 'object',
          properties: Object.fromEntries(own.map((p) => [p.name, p.schema ?? {}])),
          required: own.filter((p) => p.required).map((p) => p.name),
          // A path has only the parameters its template names. A query parameter the operation does not
          // list is no part of its contract (OpenAPI describes what an operation reads): a server may
          // refuse it (the routes with a query schema do, 400) or leave it unread.
          additionalProperties: where === 'query',
        });
      };
      compiled.push({
        key: `${method.toUpperCase()} ${path}`,
        pattern,
        names,
        literalSegments: path.split('/').filter((s) => !s.startsWith('{')).length,
        operation,
        pointer: `#/paths/${pointerSegment(path)}/${method}`,
        params: { path: params('path'), query: params('query') },
      });
    }
  }
  // /v1/webhooks/events before /v1/webhooks/{id}: the literal path wins, as in hapi.
  compiled.sort((a, b) => b.literalSegments - a.literalSegments);

  const schemas = new Map<string, ValidateFunction>();
  const schemaAt = (pointer: string) => {
    let validate = schemas.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `openapi.json${pointer}` });
      schemas.set(pointer, validate);
    }
    return validate;
  };
  const errorsOf = (validate: ValidateFunction) =>
    (validate.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`)
      .join('; ');

  /** The operation a request is for, or undefined when the document has none. */
  const find = (method: string, path: string) => {
    const wanted = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    for (const entry of compiled) {
      if (!entry.key.startsWith(`${wanted.toUpperCase()} `)) continue;
      const match = entry.pattern.exec(path);
      if (!match) continue;
      const params = Object.fromEntries(entry.names.map((name, i) => [name, decodeURIComponent(match[i + 1] ?? '')]));
      return { entry, params };
    }
    return undefined;
  };

  /**
   * What the document says is wrong with an exchange: [] when it agrees. `request: false` holds the
   * answer only (a fuzzer's hostile requests the server accepts, leniently, are not the question).
   */
  const check = (exchange: Exchange, options: { request?: boolean } = {}): string[] => {
    const found = find(exchange.method, exchange.path);
    if (!found) return [`${exchange.method.toUpperCase()} ${exchange.path}: no operation in the document`];
    const { entry, params } = found;
    const where = `${entry.key} → ${exchange.status}`;
    const problems: string[] = [];

    // The answer.
    let response = entry.operation.responses[String(exchange.status)];
    let responsePointer = `${entry.pointer}/responses/${exchange.status}`;
    if (response?.$ref) {
      const name = response.$ref.split('/').pop() ?? '';
      response = document.components.responses?.[name];
      responsePointer = `#/components/responses/${pointerSegment(name)}`;
    }
    if (!response) problems.push(`${where}: status ${exchange.status} is not documented`);
    else if (response.content && exchange.method.toLowerCase() !== 'head') {
      const type = mediaType(exchange.responseContentType);
      const documented = Object.keys(response.content);
      const matching = documented.find((t) => t === type) ?? documented.find((t) => t === '*/*');
      if (!type) {
        // No body (a 204-like answer): nothing to hold against a schema.
      } else if (!matching) {
        problems.push(`${where}: answered ${type}, documented ${documented.join(', ')}`);
      } else if (isJson(matching) && response.content[matching]?.schema) {
        const validate = schemaAt(`${responsePointer}/content/${pointerSegment(matching)}/schema`);
        if (!validate(exchange.responseBody)) problems.push(`${where}: response body: ${errorsOf(validate)}`);
      }
    }

    // The request, when the server accepted it.
    if (options.request !== false && exchange.status < 400 && exchange.method.toLowerCase() !== 'head') {
      if (!entry.params.path(params)) problems.push(`${where}: path parameters: ${errorsOf(entry.params.path)}`);
      const query = structuredClone(exchange.query);
      if (!entry.params.query(query)) problems.push(`${where}: query: ${errorsOf(entry.params.query)}`);
      const body = entry.operation.requestBody;
      const type = mediaType(exchange.requestContentType);
      if (!body) {
        if (exchange.hasRequestBody && exchange.requestBody !== undefined && exchange.requestBody !== null) {
          problems.push(`${where}: sent a ${type ?? ''} body, the operation documents none`);
        }
      } else if (!exchange.hasRequestBody) {
        if (body.required) problems.push(`${where}: the request body is required`);
      } else if (!type || !body.content[type]) {
        problems.push(
          `${where}: sent ${type ?? 'no content type'}, documented ${Object.keys(body.content).join(', ')}`,
        );
      } else if (isJson(type) && exchange.requestBody !== undefined) {
        const validate = schemaAt(`${entry.pointer}/requestBody/content/${pointerSegment(type)}/schema`);
        if (!validate(exchange.requestBody)) problems.push(`${where}: request body: ${errorsOf(validate)}`);
      }
    }
    return problems;
  };

  return { check, find };
}

function jsonOrUndefined(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** The exchange a finished request had, as the validator reads it. */
export function exchangeOf(request: Request): Exchange | undefined {
  const response = request.response;
  if (!response || response instanceof Error) return undefined;
  // Without a prototype: a parameter named `constructor` or `__proto__` is a parameter like any other.
  const query: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of request.url.searchParams) {
    const previous = Object.hasOwn(query, name) ? query[name] : undefined;
    query[name] = previous === undefined ? value : [...[previous].flat(), value];
  }
  const orig = (request as unknown as { orig?: { payload?: unknown } }).orig;
  const requestContentType = request.headers['content-type'] as string | undefined;
  const length = Number(request.headers['content-length'] ?? 0);
  const hasRequestBody = length > 0 || request.headers['transfer-encoding'] !== undefined;
  let requestBody: unknown;
  if (isJson(mediaType(requestContentType))) {
    requestBody = orig?.payload ?? request.payload;
    // A JSON body its route reads raw (`payload.parse: false`, the hosted MCP endpoint's) is read here
    // as the route reads it; bytes that are no JSON are left unread (undefined: not held).
    if (Buffer.isBuffer(requestBody)) requestBody = jsonOrUndefined(requestBody);
    else if (typeof (requestBody as { pipe?: unknown })?.pipe === 'function') requestBody = undefined;
  }
  const responseContentType = (response.headers['content-type'] as string | undefined) ?? undefined;
  let responseBody: unknown;
  const source = response.source as unknown;
  if (isJson(mediaType(responseContentType))) {
    if (typeof source === 'string') responseBody = JSON.parse(source);
    else if (Buffer.isBuffer(source)) responseBody = JSON.parse(source.toString('utf8'));
    else if (typeof (source as { pipe?: unknown })?.pipe !== 'function') {
      responseBody = source === null || source === undefined ? null : JSON.parse(JSON.stringify(source));
    }
  }
  return {
    method: request.method,
    path: request.path,
    query,
    requestContentType,
    requestBody,
    hasRequestBody,
    status: response.statusCode,
    responseContentType,
    responseBody,
  };
}

/**
 * Holds every exchange of `server` under /v1 against its own OpenAPI document, once each response
 * has been sent. Returns the violations found so far (each with its request id) and how many
 * exchanges were checked; `record` collects the exchanges, to check them again.
 */
export function checkTrafficAgainstOpenApi(server: Server, document?: OpenApiDocument, record?: Exchange[]) {
  const validator = createOpenApiValidator(
    document ?? (JSON.parse(JSON.stringify(buildOpenApiDocument(server))) as OpenApiDocument),
  );
  const state = { violations: [] as string[], checked: 0 };
  server.events.on('response', (request) => {
    // The document describes /v1 (GET /v1/openapi.json is the document itself, not one of its operations).
    if (!request.path.startsWith('/v1/') || request.path === '/v1/openapi.json') return;
    const exchange = exchangeOf(request);
    // A path no route has (404 from hapi's router) is no operation of the document.
    if (!exchange || request.route.path === '/{p*}' || (request.route.method as string) === '_special') return;
    // The document is the routes tagged `api`: a protocol's own answer outside it (the MCP transport's
    // 405 to a GET, which asks for a stream it does not offer) is no operation of it.
    if (!request.route.settings.tags?.includes('api')) return;
    state.checked += 1;
    record?.push(exchange);
    for (const problem of validator.check(exchange)) state.violations.push(`${problem} [${request.app.requestId}]`);
  });
  return state;
}
