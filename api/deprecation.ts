import type { Request, ResponseObject } from '@hapi/hapi';
import type Joi from 'joi';
import type { RouteDeprecation } from './types.ts';

// A deprecated route keeps answering until its sunset, and says so on every response, in the
// headers clients and gateways already read: `Deprecation` (RFC 9745, a structured-field date:
// `@` and Unix seconds), `Sunset` (RFC 8594, an HTTP date), and `Link` to the successor and to the
// documentation of the change (docs/conventions.md, "Deprecation").
//
// A field can be deprecated too, in its joi schema (`deprecatedField`): the OpenAPI document flags
// the property or parameter, and the same headers go out on the responses to a request that sends
// the field, or, for a response field, on every successful response of its route. Its successor is
// a field name, which the document states; `Link` names only a successor that is a URI.

/** The headers of a deprecated route's responses, by name. */
export function deprecationHeaders(deprecation: RouteDeprecation, docsBaseUrl: string): Record<string, string> {
  const links = [`<${docsBaseUrl}/deprecations>; rel="deprecation"; type="text/html"`];
  if (deprecation.successor) links.unshift(`<${deprecation.successor}>; rel="successor-version"`);
  return {
    Deprecation: `@${Math.floor(deprecation.since.getTime() / 1000)}`,
    Sunset: deprecation.sunset.toUTCString(),
    Link: links.join(', '),
  };
}

/** Adds them to a response, keeping a `Link` the route set itself. */
export function markDeprecated(response: ResponseObject, deprecation: RouteDeprecation, docsBaseUrl: string): void {
  for (const [name, value] of Object.entries(deprecationHeaders(deprecation, docsBaseUrl))) {
    const current = response.headers[name];
    response.header(name, name === 'Link' && typeof current === 'string' ? `${current}, ${value}` : value);
  }
}

/** A field on its way out: `successor` is the field (or route) that replaces it. */
export type FieldDeprecation = RouteDeprecation;

/** Marks a field of a request or response schema deprecated. */
export function deprecatedField<T extends Joi.Schema>(schema: T, deprecation: FieldDeprecation): T {
  return schema.meta({ deprecated: deprecation }) as T;
}

type Dated = { since: Date | string; sunset: Date | string; successor?: string };
type Described = { keys?: Record<string, Described>; metas?: Array<{ deprecated?: Dated }> };

/** The deprecation a described joi node carries, if any (a description writes its dates as strings). */
export function fieldDeprecationOf(description: Described): FieldDeprecation | undefined {
  const found = description.metas?.find((meta) => meta.deprecated)?.deprecated;
  if (!found) return undefined;
  return {
    since: new Date(found.since),
    sunset: new Date(found.sunset),
    ...(found.successor ? { successor: found.successor } : {}),
  };
}

/** The deprecated fields of an object schema, by path (nested objects' keys included). */
function deprecatedFields(schema: unknown): Array<{ path: string[]; deprecation: FieldDeprecation }> {
  if (!schema || typeof (schema as Joi.Schema).describe !== 'function') return [];
  const found: Array<{ path: string[]; deprecation: FieldDeprecation }> = [];
  const walk = (node: Described, path: string[]) => {
    for (const [key, child] of Object.entries(node.keys ?? {})) {
      const deprecation = fieldDeprecationOf(child);
      if (deprecation) found.push({ path: [...path, key], deprecation });
      walk(child, [...path, key]);
    }
  };
  walk((schema as Joi.Schema).describe() as Described, []);
  return found;
}

type RouteFields = {
  request: Array<{ where: 'payload' | 'query'; path: string[]; deprecation: FieldDeprecation }>;
  response: FieldDeprecation[];
};
const fieldsByRoute = new WeakMap<object, RouteFields>();

function routeFields(request: Request): RouteFields {
  const settings = request.route.settings;
  let fields = fieldsByRoute.get(settings);
  if (!fields) {
    const validate = (settings.validate ?? {}) as { payload?: unknown; query?: unknown };
    fields = {
      request: [
        ...deprecatedFields(validate.payload).map((field) => ({ where: 'payload' as const, ...field })),
        ...deprecatedFields(validate.query).map((field) => ({ where: 'query' as const, ...field })),
      ],
      response: deprecatedFields(settings.response?.schema).map((field) => field.deprecation),
    };
    fieldsByRoute.set(settings, fields);
  }
  return fields;
}

function has(value: unknown, path: readonly string[]): boolean {
  let node = value;
  for (const key of path) {
    if (!node || typeof node !== 'object' || !Object.hasOwn(node, key)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return node !== undefined;
}

/**
 * The deprecation this response must announce: the route's own, a request field the client sent, a
 * field of the successful response. Several combine into the earliest dates; only the route's
 * successor is a link.
 */
export function deprecationOf(
  request: Request,
  route: RouteDeprecation | undefined,
  status: number,
): RouteDeprecation | undefined {
  const fields = routeFields(request);
  const applying = [
    ...fields.request.filter((field) => has(request[field.where], field.path)).map((field) => field.deprecation),
    ...(status < 300 ? fields.response : []),
  ];
  if (applying.length === 0) return route;
  const all = route ? [route, ...applying] : applying;
  const earliest = (pick: (d: RouteDeprecation) => Date) =>
    new Date(Math.min(...all.map((deprecation) => pick(deprecation).getTime())));
  return {
    since: earliest((d) => d.since),
    sunset: earliest((d) => d.sunset),
    ...(route?.successor ? { successor: route.successor } : {}),
  };
}
