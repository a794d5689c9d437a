import type { ResponseObject } from '@hapi/hapi';
import type { RouteDeprecation } from './types.ts';

// A deprecated route keeps answering until its sunset, and says so on every response, in the
// headers clients and gateways already read: `Deprecation` (RFC 9745, a structured-field date:
// `@` and Unix seconds), `Sunset` (RFC 8594, an HTTP date), and `Link` to the successor and to the
// documentation of the change (docs/conventions.md, "Deprecation").

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
