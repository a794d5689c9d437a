import type { RouteOptionsPayload, Server } from '@hapi/hapi';
import Joi from 'joi';
import joiToJsonModule from 'joi-to-json';
import { FAMILIES } from '../lib/families.ts';
import { fieldDeprecationOf } from './deprecation.ts';
import { errorEnvelope, scimErrorBody } from './schemas.ts';
import type { OpenApiSettings, RouteDeprecation, RouteSettings } from './types.ts';
import { API_REVISION, OPENAPI_DOCUMENT_VERSION } from './version.ts';

// The OpenAPI 3.1 document is derived from the routes' own joi schemas, so it
// cannot drift from what the server validates.

type JsonSchema = Record<string, unknown>;
type Operation = Record<string, unknown>;

// joi-to-json is CommonJS (`module.exports = parse`), which its typings describe as an ES default export.
const joiToJson = joiToJsonModule as unknown as (schema: Joi.Schema, mode: string) => JsonSchema;
const toSchema = (schema: Joi.Schema): JsonSchema => {
  const description = schema.describe();
  return withDeprecatedProperties(
    description,
    withoutAnyTypeList(
      withInvertedPatterns(
        description,
        withPatternProperties(description, withoutPatternFlags(description, joiToJson(schema, 'open-api-3.1'))),
      ),
    ),
  );
};

/** A sentence saying since when, until when and by what a route or field is replaced. */
function deprecationNote(deprecation: RouteDeprecation): string {
  return (
    `Deprecated since ${deprecation.since.toISOString()}; answers until ${deprecation.sunset.toISOString()}` +
    (deprecation.successor ? `, replaced by \`${deprecation.successor}\`.` : '.')
  );
}

/** Fields marked with `deprecatedField` (api/deprecation.ts) get `deprecated: true` and the note. */
function withDeprecatedProperties(description: Description, json: JsonSchema): JsonSchema {
  const properties = json.properties as Record<string, JsonSchema> | undefined;
  for (const [key, child] of Object.entries(description.keys ?? {})) {
    const property = properties?.[key];
    if (!property) continue;
    const deprecation = fieldDeprecationOf(child);
    if (deprecation) {
      property.deprecated = true;
      property.description = [property.description, deprecationNote(deprecation)].filter(Boolean).join(' ');
    }
    withDeprecatedProperties(child, property);
  }
  return json;
}

const EVERY_TYPE = ['array', 'boolean', 'null', 'number', 'object', 'string'];

/**
 * joi-to-json writes `Joi.any()` as a list of every JSON type; JSON Schema says "anything" by
 * having no `type`, which is what code generators understand (oapi-codegen refuses the list).
 */
function withoutAnyTypeList(json: JsonSchema): JsonSchema {
  const walk = (node: unknown) => {
    if (Array.isArray(node)) for (const item of node) walk(item);
    else if (node && typeof node === 'object') {
      const schema = node as JsonSchema;
      const types = schema.type;
      if (Array.isArray(types) && EVERY_TYPE.every((type) => types.includes(type))) delete schema.type;
      for (const value of Object.values(schema)) walk(value);
    }
  };
  walk(json);
  return json;
}

type Description = {
  type?: string;
  rules?: Array<{ name: string; args?: { regex?: string; options?: { invert?: boolean } } }>;
  keys?: Record<string, Description>;
  items?: Description[];
  patterns?: Array<{ schema?: Description; regex?: string; rule: Description }>;
  metas?: Array<{ deprecated?: { since: Date | string; sunset: Date | string; successor?: string } }>;
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

/**
 * joi-to-json publishes `string().pattern(re, { invert: true })` (must NOT match) as `pattern: re`
 * (must match): the document then calls every valid value invalid. Each inverted pattern of the
 * joi description is found and, wherever the JSON schema carries it, replaced by its negation:
 * `^[^c]*$` for a single character (written `\xHH`, which ECMAScript, RE2 and PCRE all read), or
 * JSON Schema's `not: { pattern }` for anything longer. Where joi-to-json kept another (positive)
 * pattern instead, that one stays: it is a looser, never a wrong, description.
 */
function withInvertedPatterns(description: unknown, json: JsonSchema): JsonSchema {
  const inverted = new Set<string>();
  const collect = (node: unknown) => {
    if (Array.isArray(node)) for (const item of node) collect(item);
    else if (node && typeof node === 'object') {
      const rule = node as { name?: unknown; args?: { regex?: unknown; options?: { invert?: unknown } } };
      if (rule.name === 'pattern' && rule.args?.options?.invert === true && typeof rule.args.regex === 'string') {
        inverted.add(rule.args.regex.replace(/^\/(.*)\/[a-z]*$/s, '$1'));
      }
      for (const value of Object.values(node)) collect(value);
    }
  };
  collect(description);
  if (inverted.size === 0) return json;
  const rewrite = (node: unknown) => {
    if (Array.isArray(node)) for (const item of node) rewrite(item);
    else if (node && typeof node === 'object') {
      const schema = node as JsonSchema;
      const children = Object.values(schema);
      if (typeof schema.pattern === 'string' && inverted.has(schema.pattern)) {
        const source = schema.pattern;
        delete schema.pattern;
        const negated = negatedCharacter(source);
        if (negated) schema.pattern = negated;
        else schema.not = { pattern: source };
      }
      // Not into the `not` just written: its pattern is the one to keep.
      for (const value of children) rewrite(value);
    }
  };
  rewrite(json);
  return json;
}

/**
 * joi-to-json strips a regex's slashes but keeps its flags: `/^[\p{L}]+$/u` was published as
 * `^[\p{L}]+$/u`, a pattern nothing matches (a literal `/u` after the end). JSON Schema patterns
 * are ECMAScript's with Unicode semantics already, so the `u` flag is dropped; a flag JSON Schema
 * cannot say (`i`, `m`, `s`) is refused here rather than published wrong.
 */
function withoutPatternFlags(description: unknown, json: JsonSchema): JsonSchema {
  const flagged = new Map<string, string>();
  const collect = (node: unknown) => {
    if (Array.isArray(node)) for (const item of node) collect(item);
    else if (node && typeof node === 'object') {
      const rule = node as { name?: unknown; args?: { regex?: unknown } };
      const literal = rule.name === 'pattern' && typeof rule.args?.regex === 'string' ? rule.args.regex : '';
      const [, source, flags] = /^\/(.*)\/([a-z]+)$/s.exec(literal) ?? [];
      if (source !== undefined && flags !== undefined) {
        if (flags.replaceAll('u', '') !== '') throw new Error(`pattern ${literal}: JSON Schema has no flag ${flags}`);
        flagged.set(`${source}/${flags}`, source);
      }
      for (const value of Object.values(node)) collect(value);
    }
  };
  collect(description);
  if (flagged.size === 0) return json;
  const rewrite = (node: unknown) => {
    if (Array.isArray(node)) for (const item of node) rewrite(item);
    else if (node && typeof node === 'object') {
      const schema = node as JsonSchema;
      const source = typeof schema.pattern === 'string' ? flagged.get(schema.pattern) : undefined;
      if (source !== undefined) schema.pattern = source;
      for (const value of Object.values(schema)) rewrite(value);
    }
  };
  rewrite(json);
  return json;
}

/** `^[^c]*$` when `source` matches exactly one given character, else undefined. */
function negatedCharacter(source: string): string | undefined {
  let code: number | undefined;
  const escaped = /^\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2}))$/.exec(source);
  if (escaped) code = Number.parseInt(escaped[1] ?? escaped[2] ?? '', 16);
  else if ([...source].length === 1 && !/[\\^$.|?*+()[\]{}]/.test(source)) code = source.codePointAt(0);
  if (code === undefined) return undefined;
  const hex = code.toString(16).padStart(2, '0');
  return `^[^${code <= 0xff ? `\\x${hex}` : `\\u${code.toString(16).padStart(4, '0')}`}]*$`;
}

/**
 * The error responses of the spec's table, one per status, each the envelope
 * (`components/schemas/Error`). Operations refer to them by `$ref`; which ones an operation lists
 * is derived from its route in `errorStatuses`.
 */
const ERROR_RESPONSES: Record<number, { name: string; description: string }> = {
  400: {
    name: 'ValidationError',
    description: '`validation_error`: a parameter, header or body is invalid; `param` names it.',
  },
  401: {
    name: 'Unauthorized',
    description:
      '`missing_api_key`, `invalid_api_key`, `revoked_api_key` or `expired_api_key`; `mfa_required` when a sensitive scope needs `X-MFA-Code`.',
  },
  403: {
    name: 'Forbidden',
    description:
      "`scope_missing` (the key lacks the operation's scope, named in `required_scope`), `ip_not_allowed`, or `forbidden` (the state of the resource refuses the request).",
  },
  404: {
    name: 'NotFound',
    description: '`not_found`: nothing by that id, code or token in this workspace and environment.',
  },
  408: { name: 'RequestTimeout', description: '`validation_error`: the body stalled or took too long; resume it.' },
  409: {
    name: 'Conflict',
    description:
      '`idempotency_conflict` (the `Idempotency-Key` was used with another request), or `validation_error` for a state that refuses the request now.',
  },
  410: { name: 'Gone', description: '`not_found` with status 410: ended for good (expired, revoked, deleted).' },
  412: {
    name: 'PreconditionFailed',
    description:
      '`validation_error`: the request speaks a protocol version this API does not (`Tus-Version` lists ours).',
  },
  413: { name: 'PayloadTooLarge', description: '`validation_error`: the body is larger than this operation accepts.' },
  415: {
    name: 'UnsupportedMediaType',
    description: '`validation_error`: the body is not of a type this operation reads.',
  },
  416: {
    name: 'RangeNotSatisfiable',
    description: '`validation_error`: the `Range` is outside the file (`Content-Range: bytes */<size>`).',
  },
  422: {
    name: 'UnprocessableEntity',
    description: '`validation_error`: well-formed, but not applicable to this resource.',
  },
  429: {
    name: 'TooManyRequests',
    description: '`rate_limited`: retry after `Retry-After` seconds (a key past its `max_uses` gets no `Retry-After`).',
  },
  460: {
    name: 'ChecksumMismatch',
    description: '`validation_error`: the body does not match its `Upload-Checksum` (tus); none of it was kept.',
  },
  500: { name: 'InternalError', description: '`internal_error`: quote `request_id` to support.' },
  503: {
    name: 'ServiceUnavailable',
    description:
      '`service_unavailable`: a component the service needs (the database, object storage, Temporal) is not answering; retry after `Retry-After` seconds.',
  },
};

/**
 * The same statuses for routes whose errors are RFC 7644's SCIM error (`plugins.valise.openapi.errorBody`
 * `scim`, components/schemas/ScimError): `status` is the status as a string, `scimType` says what
 * was wrong where RFC 7644 §3.12 has a word for it.
 */
const SCIM_ERROR_DESCRIPTIONS: Record<number, string> = {
  400: '`scimType` `invalidFilter`, `invalidValue`, `invalidSyntax`, `noTarget` or `mutability`: the filter, a parameter or the body is refused.',
  401: 'No SCIM token, or one that is unknown or revoked (an API key is refused here too).',
  404: 'No resource by that id in the workspace of the token.',
  409: '`scimType` `uniqueness`: another member of the workspace has this `userName` or e-mail address.',
  413: 'The body is larger than this operation accepts.',
  415: 'The body is neither `application/scim+json` nor `application/json`.',
  429: "Over the workspace's rate limit: retry after `Retry-After` seconds.",
  500: 'Something went wrong on our side.',
  503: 'A component the service needs is not answering: retry after `Retry-After` seconds.',
};

/**
 * The security schemes of routes authenticated by another strategy than the API key (`options.auth`),
 * the first the one whose errors the route answers (an MCP control endpoint also takes API keys).
 */
const SCHEMES_OF_STRATEGY: Record<string, readonly [string, ...string[]]> = {
  'publishable-key': ['publishableKey'],
  'scim-token': ['scimToken'],
  'mcp-token': ['mcpToken'],
  'mcp-control': ['bearer', 'mcpToken'],
};

const SECURITY_SCHEMES: Record<string, { type: 'http'; scheme: 'bearer'; description: string }> = {
  bearer: { type: 'http', scheme: 'bearer', description: 'An API key: svc_live_…, svc_test_…' },
  publishableKey: {
    type: 'http',
    scheme: 'bearer',
    description:
      "An intake's publishable key (`cip_live_…`, `cip_test_…`), made to sit in a public page: it opens the submitter routes of its own intake and nothing else. API keys are refused there (401).",
  },
  scimToken: {
    type: 'http',
    scheme: 'bearer',
    description:
      'A SCIM token (`scim_…`), created with POST /v1/scim/tokens and given to an identity provider: it opens the SCIM protocol routes of its workspace and nothing else. API keys are refused there (401).',
  },
  mcpToken: {
    type: 'http',
    scheme: 'bearer',
    description:
      'An MCP token (`svc_mcp_…`), created with POST /v1/mcp/tokens and given to an MCP client: it opens the hosted MCP endpoint of its workspace (the control endpoint and the transport) and nothing else; other routes refuse it (401).',
  },
};

/** Each family's tag (lib/families.ts), and the tags of the routes that belong to no one family. */
const TAGS: Record<string, string> = {
  ...Object.fromEntries(
    FAMILIES.flatMap((family) => (family.openapi ? [[family.openapi.tag, family.openapi.description]] : [])),
  ),
  uploads: 'Uploading files through the capability URLs a transfer, a submission or a vault item returns.',
  shares: 'What a recipient sees and downloads: public, authorised by the share code and its password.',
  meta: 'About the API and the caller.',
};

const SUCCESS_DESCRIPTIONS: Record<string, string> = {
  200: 'OK',
  201: 'Created',
  204: 'No content',
  206: 'Partial content',
};
const JSON_MEDIA_TYPE = 'application/json';
const MUTATING = new Set(['post', 'put', 'patch', 'delete']);

type Validate = { params?: Joi.ObjectSchema; query?: Joi.ObjectSchema; payload?: Joi.Schema };
type RouteEntry = ReturnType<Server['table']>[number];

export function buildOpenApiDocument(server: Server) {
  const { config } = server.app.services;
  const paths: Record<string, Record<string, Operation>> = {};
  const tags = new Set<string>();
  const scimErrors = new Set<number>();
  for (const route of server.table()) {
    const settings = route.settings;
    if (!settings.tags?.includes('api')) continue;
    if (!settings.id) throw new Error(`${route.method.toUpperCase()} ${route.path} needs options.id: its operationId`);
    const valise: RouteSettings = settings.plugins?.valise ?? {};
    const validate = (settings.validate ?? {}) as Validate;
    const isPublic = (settings.auth as unknown) === false;
    const schemes = securitySchemesOf(route);
    const operation: Operation = {
      operationId: settings.id,
      summary: settings.description,
      description: [settings.notes, access(isPublic, schemes, valise.scope)].filter(Boolean).join('\n\n'),
      tags: settings.tags.filter((t) => t !== 'api'),
      parameters: [
        ...parameters(validate.params, 'path'),
        ...parameters(validate.query, 'query'),
        ...Object.entries(valise.openapi?.requestHeaders ?? {}).map(([name, header]) => ({
          name,
          in: 'header',
          required: header.required ?? false,
          description: header.description,
          schema: header.schema,
        })),
        ...(idempotent(route) ? [{ $ref: '#/components/parameters/IdempotencyKey' }] : []),
      ],
    };
    const mediaType = valise.openapi?.mediaType ?? JSON_MEDIA_TYPE;
    const body = valise.openapi?.rawJsonBody
      ? { content: { [mediaType]: { schema: toSchema(valise.openapi.rawJsonBody) } } }
      : requestBody(validate, settings.payload as RouteOptionsPayload | undefined, route.method, mediaType);
    if (body) operation.requestBody = body;
    operation.responses = responses(route, valise);
    if (valise.openapi?.errorBody === 'scim') for (const status of errorStatuses(route)) scimErrors.add(status);
    operation.security = isPublic ? [] : schemes.map((name) => ({ [name]: [] }));
    if (valise.scope) operation['x-required-scope'] = valise.scope;
    if (valise.sdk) operation['x-sdk-excluded'] = valise.sdk.excluded;
    if (valise.deprecated) {
      operation.deprecated = true;
      operation.description = [operation.description, deprecationNote(valise.deprecated)].join('\n\n');
    }
    for (const tag of operation.tags as string[]) tags.add(tag);
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, Operation>)[route.method] = operation;
    const head = valise.openapi?.head;
    if (head && route.method === 'get') {
      const description = [head.description, access(isPublic, schemes, valise.scope)].filter(Boolean).join('\n\n');
      (paths[route.path] as Record<string, Operation>).head = headOperation(operation, { ...head, description });
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Valise API',
      version: OPENAPI_DOCUMENT_VERSION,
      description: `Encrypted file transfer. Contract revision ${API_REVISION}.`,
      contact: { name: 'Valise', url: config.api.docsBaseUrl },
      license: { name: 'Proprietary', url: config.api.docsBaseUrl },
    },
    servers: [{ url: config.api.publicBaseUrl, description: 'This API server' }],
    security: [{ bearer: [] }],
    tags: [...tags].sort().map((name) => ({ name, description: TAGS[name] ?? name })),
    paths,
    components: {
      securitySchemes: SECURITY_SCHEMES,
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Makes a write safe to retry: the same key with the same request replays the first answer; with another request it is 409 `idempotency_conflict`.',
          schema: { type: 'string', minLength: 8, maxLength: 255 },
        },
      },
      responses: {
        ...Object.fromEntries(
          Object.entries(ERROR_RESPONSES).map(([status, { name, description }]) => [
            name,
            errorResponse(Number(status), description, JSON_MEDIA_TYPE, 'Error'),
          ]),
        ),
        // Only those some SCIM route answers: an unused component is a lint warning.
        ...Object.fromEntries(
          [...scimErrors]
            .sort()
            .map((status) => [
              scimErrorResponseName(status),
              errorResponse(status, SCIM_ERROR_DESCRIPTIONS[status] ?? '', 'application/scim+json', 'ScimError'),
            ]),
        ),
      },
      schemas: { Error: errorSchema(), ...(scimErrors.size > 0 ? { ScimError: toSchema(scimErrorBody) } : {}) },
    },
  };
}

function errorResponse(status: number, description: string, mediaType: string, schema: string) {
  return {
    description,
    ...(status === 429 || status === 503
      ? {
          headers: {
            'Retry-After': {
              description: 'Seconds to wait before trying again.',
              schema: { type: 'string', pattern: '^[0-9]+$' },
            },
          },
        }
      : {}),
    content: { [mediaType]: { schema: { $ref: `#/components/schemas/${schema}` } } },
  };
}

const scimErrorResponseName = (status: number) => `Scim${ERROR_RESPONSES[status]?.name ?? status}`;

/** The security schemes a route's callers may present: its authentication strategy's, else an API key. */
function securitySchemesOf(route: RouteEntry): readonly [string, ...string[]] {
  const strategies = (route.settings.auth as { strategies?: string[] } | false | undefined) || undefined;
  const strategy = strategies?.strategies?.find((name) => SCHEMES_OF_STRATEGY[name]);
  return (strategy && SCHEMES_OF_STRATEGY[strategy]) || ['bearer'];
}

/** The security scheme whose refusals a route answers: the first of its schemes. */
function securitySchemeOf(route: RouteEntry): string {
  return securitySchemesOf(route)[0];
}

/** The envelope, with `error` required: every error answer carries it. */
function errorSchema(): JsonSchema {
  const schema = toSchema(errorEnvelope);
  schema.required = ['error'];
  return schema;
}

function access(isPublic: boolean, schemes: readonly string[], scope: string | undefined): string {
  const [scheme] = schemes;
  if (isPublic) return 'Public: no API key.';
  if (schemes.length > 1) return 'Requires an API key or an MCP token (`svc_mcp_…`); any scope.';
  if (scheme === 'publishableKey') {
    return 'Requires a publishable key of this intake (`cip_…`); API keys are refused (401).';
  }
  if (scheme === 'scimToken') return 'Requires a SCIM token (`scim_…`); API keys are refused (401).';
  if (scheme === 'mcpToken') return 'Requires an MCP token (`svc_mcp_…`); API keys are refused (401).';
  return scope
    ? `Requires an API key holding the \`${scope}\` scope (403 \`scope_missing\` otherwise).`
    : 'Requires an API key; any scope.';
}

/** The schemes whose callers own idempotency records (api/extensions/idempotency.ts, `ownerOf`). */
const IDEMPOTENT_SCHEMES = new Set(['bearer', 'publishableKey']);

/**
 * Whether a route honours `Idempotency-Key`: writes with an API key or a publishable key, and public
 * writes that name their owner. A SCIM token keeps no idempotency records (RFC 7644 has none).
 */
function idempotent(route: RouteEntry): boolean {
  const settings = route.settings;
  if (!MUTATING.has(route.method) || !IDEMPOTENT_SCHEMES.has(securitySchemeOf(route))) return false;
  return (settings.auth as unknown) !== false || settings.plugins?.valise?.idempotencyOwner !== undefined;
}

/**
 * The error statuses an operation can answer, from what its route does: authenticated routes
 * answer 401, and 403 with an API key; path parameters or a body `id` 404; parameters, a JSON
 * body or an `Idempotency-Key` 400; a JSON body 413 and 415; writes with an API key (idempotent)
 * 409; every rate-limited route 429; every route 500. `plugins.valise.openapi.errors` adds what its domain logic answers besides.
 */
export function errorStatuses(route: RouteEntry): number[] {
  const settings = route.settings;
  const valise: RouteSettings = settings.plugins?.valise ?? {};
  const validate = (settings.validate ?? {}) as Validate;
  const authenticated = (settings.auth as unknown) !== false;
  const mutating = MUTATING.has(route.method);
  const jsonBody = mutating && (settings.payload as RouteOptionsPayload | undefined)?.parse !== false;
  // 503 is any route's when a component it needs is down, unless the route answers a 503 of its own
  // (GET /v1/health's report).
  const ownUnavailable = valise.openapi?.statuses?.[503] !== undefined;
  const statuses = new Set<number>([500, ...(ownUnavailable ? [] : [503]), ...(valise.openapi?.errors ?? [])]);
  if (validate.params || validate.query || validate.payload || idempotent(route)) statuses.add(400);
  if (authenticated) statuses.add(401);
  // An API key's scope, IP allow-list or environment; a SCIM token opens all its routes or none.
  if (authenticated && securitySchemeOf(route) === 'bearer') statuses.add(403);
  // A resource named by the path, or by an `id` in the body (PATCH and DELETE /v1/webhooks).
  const payloadKeys = (validate.payload?.describe() as { keys?: Record<string, unknown> } | undefined)?.keys;
  if (validate.params || payloadKeys?.id) statuses.add(404);
  if (idempotent(route)) statuses.add(409);
  if (jsonBody) {
    statuses.add(400);
    statuses.add(413);
    statuses.add(415);
  }
  if (valise.rateLimited !== false) statuses.add(429);
  return [...statuses].sort((a, b) => a - b);
}

type ResponseSettings = { schema?: Joi.Schema; status?: Record<string, Joi.Schema> };

function responses(route: RouteEntry, valise: RouteSettings) {
  const settings = route.settings.response as ResponseSettings | undefined;
  const out: Record<string, unknown> = {};
  const statuses: Record<string, Joi.Schema | undefined> = { ...(settings?.status ?? {}) };
  if (settings?.schema) statuses['200'] = settings.schema;
  for (const status of valise.openapi?.binary ?? []) statuses[status] = undefined;
  if (Object.keys(statuses).length === 0) statuses['200'] = undefined;
  const binary = new Set((valise.openapi?.binary ?? []).map(String));
  const mediaType = valise.openapi?.mediaType ?? JSON_MEDIA_TYPE;
  for (const [status, schema] of Object.entries(statuses)) {
    const description = SUCCESS_DESCRIPTIONS[status] ?? 'OK';
    if (binary.has(status)) {
      // The file's bytes, labelled with its own type (application/octet-stream when end-to-end encrypted).
      out[status] = {
        description,
        content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
      };
    } else {
      // A 204 has no body, whatever the route's schema lets through (hapi sends none).
      out[status] =
        schema && status !== '204'
          ? { description, content: { [mediaType]: { schema: toSchema(schema) } } }
          : { description };
    }
  }
  // A status answered with a body of the route's own keeps its schema (response.status), described here.
  for (const [status, description] of Object.entries(valise.openapi?.statuses ?? {})) {
    out[status] = { ...(out[status] as object | undefined), description };
  }
  for (const [status, headers] of Object.entries(valise.openapi?.responseHeaders ?? {})) {
    const answer = out[status] as { headers?: Record<string, unknown> } | undefined;
    if (!answer)
      throw new Error(
        `${route.method.toUpperCase()} ${route.path}: headers for status ${status}, which it does not answer`,
      );
    answer.headers = Object.fromEntries(
      Object.entries(headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]),
    );
  }
  for (const status of errorStatuses(route)) {
    const error = ERROR_RESPONSES[status];
    if (!error) throw new Error(`${route.method.toUpperCase()} ${route.path}: no error response for status ${status}`);
    const name = valise.openapi?.errorBody === 'scim' ? scimErrorResponseName(status) : error.name;
    out[status] = { $ref: `#/components/responses/${name}` };
  }
  return out;
}

/** The HEAD of a GET operation: its parameters, statuses and headers, and no success body. */
function headOperation(get: Operation, head: NonNullable<OpenApiSettings['head']>): Operation {
  const responses = Object.fromEntries(
    Object.entries(get.responses as Record<string, { $ref?: string; content?: unknown; description?: string }>).map(
      ([status, answer]) => {
        // An error keeps the shared envelope's response: a HEAD's has the same status and headers, and
        // HTTP drops its body.
        if (answer.$ref) return [status, answer];
        const { content: _, ...bodiless } = answer;
        return [status, bodiless];
      },
    ),
  );
  const operation: Operation = { ...get, operationId: head.id, summary: head.summary, description: head.description };
  operation.responses = responses;
  if (head.sdk) operation['x-sdk-excluded'] = head.sdk.excluded;
  return operation;
}

/**
 * A JSON body from the route's joi payload schema, in the route's media type and whatever other types
 * its `payload.allow` reads; or the raw bytes of a route that streams its body.
 */
function requestBody(validate: Validate, payload: RouteOptionsPayload | undefined, method: string, mediaType: string) {
  if (validate.payload && typeof validate.payload === 'object' && 'describe' in validate.payload) {
    const schema = toSchema(validate.payload);
    const types = new Set([mediaType, ...[payload?.allow ?? []].flat()]);
    return { content: Object.fromEntries([...types].map((type) => [type, { schema }])) };
  }
  if (MUTATING.has(method) && payload?.parse === false) {
    const types = [payload.allow ?? 'application/octet-stream'].flat().filter((type) => type !== 'application/json');
    // JSON read raw is no binary string: such a route says what it reads (`openapi.rawJsonBody`).
    if (types.length === 0) throw new Error('a route reading raw JSON needs plugins.valise.openapi.rawJsonBody');
    // Not required: an empty file is uploaded with an empty body.
    return {
      content: Object.fromEntries(types.map((type) => [type, { schema: { type: 'string', format: 'binary' } }])),
    };
  }
  return undefined;
}

function parameters(schema: Joi.ObjectSchema | undefined, where: 'path' | 'query') {
  if (!schema || typeof schema.describe !== 'function') return [];
  const json = toSchema(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    ...(property.deprecated ? { deprecated: true } : {}),
    schema: property,
  }));
}
