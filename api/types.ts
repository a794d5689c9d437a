import type { Request } from '@hapi/hapi';
import type Joi from 'joi';
import type { Claim, RecordOwner } from '../lib/db/queries/idempotency.ts';
import type { Submitter } from '../lib/intakes/publishable-keys.ts';
import type { McpCaller } from '../lib/mcp/tokens.ts';
import type { ScimCaller } from '../lib/scim/tokens.ts';
import type { ScimOperation, ScimResourceType } from '../lib/scim/vocabulary.ts';
import type { Services } from '../lib/services.ts';
import type { Caller } from '../lib/tenancy.ts';
import type { HealthProbe } from './health.ts';
import type { RateLimiter, RateState } from './rate-limiter.ts';

export type RateClass = 'read' | 'write' | 'expensive';

/** What each route declares besides hapi's own options: `options.plugins.valise`. */
export type RouteSettings = {
  /** The scope the calling key must hold. */
  scope?: string;
  /** The rate-limit budget the route draws from; GET is `read`, other methods `write`. */
  rateClass?: RateClass;
  /** false for static files (page assets): cheap, cacheable, and several per page load. */
  rateLimited?: boolean;
  /** How a successful or failed call of a mutating route reads in the audit log. */
  audit?: {
    action: string;
    resourceType: string;
    /**
     * What the entry's metadata adds about the request (a document accepted, an export's filters):
     * ids and settings read from it, never secrets.
     */
    metadata?: (request: Request) => Record<string, unknown>;
    /**
     * The entry's resource id, when neither the path's `id` nor the answer's `id` is it (the control
     * endpoint of the hosted MCP echoes a JSON-RPC `id`, which names no resource): null for none.
     */
    resourceId?: (request: Request) => string | null;
  };
  /** A SCIM route (`scim-token` strategy): the SCIM audit event each call writes (api/extensions/scim-audit.ts). */
  scim?: { operation: ScimOperation; resourceType: ScimResourceType };
  /** What the OpenAPI document cannot read from the route's other settings (api/openapi.ts). */
  openapi?: OpenApiSettings;
  /**
   * An operation the SDK leaves out on purpose, and why (its clients are someone else's software):
   * published as `x-sdk-excluded`, which the SDK's coverage check (test/sdk/drift.test.ts) honours.
   */
  sdk?: { excluded: string };
  /** A route on its way out (api/deprecation.ts): its headers, and `deprecated` in the OpenAPI document. */
  deprecated?: RouteDeprecation;
  /**
   * A write without an API key that still honours `Idempotency-Key` (api/extensions/idempotency.ts):
   * whose record the request's is, from its own credential (a vault member's invitation link), or
   * null when the credential does not verify (the handler then answers why).
   */
  idempotencyOwner?: (request: Request) => Promise<RecordOwner | null>;
};

export type RouteDeprecation = {
  /** When it was deprecated (RFC 9745 `Deprecation`). */
  since: Date;
  /** When it stops answering (RFC 8594 `Sunset`), at least `since`. */
  sunset: Date;
  /** Its replacement, a path of this API or a URL: `Link: <…>; rel="successor-version"`. */
  successor?: string;
};

/** A header an operation reads, as the OpenAPI document describes it (a `header` parameter). */
export type OpenApiHeader = { description: string; required?: boolean; schema: Record<string, unknown> };

export type OpenApiSettings = {
  /** Request headers the route reads besides the API's own (tus's `Upload-Offset`…), by name. */
  requestHeaders?: Record<string, OpenApiHeader>;
  /** Headers of its success answers, by status and name: their descriptions. */
  responseHeaders?: Record<number, Record<string, string>>;
  /**
   * Error statuses the route's domain logic answers beyond those api/openapi.ts derives from its
   * settings (authentication, scope, parameters, payload, idempotency), e.g. 410 for an ended share.
   */
  errors?: number[];
  /** Success statuses whose body is a file's bytes (`application/octet-stream`), not JSON. */
  binary?: number[];
  /** Other statuses the route answers with a body of its own (not the error envelope): status → description. */
  statuses?: Record<number, string>;
  /**
   * The media type of the route's JSON bodies, answers and errors alike (`application/scim+json` for
   * the SCIM protocol); `application/json` when unset. A request body may also come in any type the
   * route's `payload.allow` lists.
   */
  mediaType?: string;
  /**
   * A JSON body the handler reads itself from the raw bytes (`payload.parse: false`), described by this
   * schema in the document (the hosted MCP control endpoint parses leniently, its transport hands the
   * bytes to the MCP SDK: docs/mcp.md).
   */
  rawJsonBody?: Joi.Schema;
  /**
   * The body of its error answers: the API's envelope (`components/schemas/Error`), or RFC 7644's
   * SCIM error (`components/schemas/ScimError`, what api/errors.ts `renderScimError` writes).
   */
  errorBody?: 'envelope' | 'scim';
  /**
   * A GET that HEAD answers as a protocol of its own (tus's HEAD on an upload URL): published as a
   * `head` operation too, with this id and summary, the GET's parameters and headers, and no success body;
   * `sdk` as the route setting, for the HEAD alone.
   */
  head?: { id: string; summary: string; description: string; sdk?: { excluded: string } };
};

/** Process-wide dependencies, reachable from any handler as `request.server.app`. */
export type ApiDependencies = {
  services: Services;
  rateLimiter: RateLimiter;
  healthProbes: HealthProbe[];
};

declare module '@hapi/hapi' {
  interface ServerApplicationState extends ApiDependencies {}
  interface PluginSpecificConfiguration {
    valise?: RouteSettings;
  }
  interface AppCredentials {
    /** An API key's caller (the `api-key` strategy). */
    caller?: Caller;
    /** A publishable key's submitter (the `publishable-key` strategy, intake submitter routes). */
    submitter?: Submitter;
    /** A SCIM token's caller (the `scim-token` strategy, /v1/scim/Users and /v1/scim/Groups). */
    scim?: ScimCaller;
    /** An MCP token's caller (the `mcp-token` and `mcp-control` strategies, /v1/mcp/hosted). */
    mcp?: McpCaller;
  }
  interface RequestApplicationState {
    requestId: string;
    rate?: RateState;
    /** The request's Idempotency-Key: replayed, or claimed (`claim`, held until `settle`d). */
    idempotency?:
      | { key: string; replayed: true; owner: RecordOwner }
      | { key: string; replayed: false; owner: RecordOwner; claim: Claim; stopRenewing: () => void };
  }
}

/**
 * A request whatever its route's inputs (a route's handler sees them typed, see api/route.ts):
 * what helpers that read no route input take.
 */
export type AnyRequest = Omit<Request, 'params' | 'query' | 'payload'>;

export function callerOf(request: AnyRequest): Caller {
  const caller = request.auth.credentials?.app?.caller;
  if (!caller) throw new Error(`Route ${request.route.path} reads a caller but has no authentication`);
  return caller;
}

export function routeSettings(request: AnyRequest): RouteSettings {
  return request.route.settings.plugins?.valise ?? {};
}

/** A request header as a string, or undefined when absent (the first one when repeated). */
export function headerOf(request: AnyRequest, name: string): string | undefined {
  const value: unknown = request.headers[name.toLowerCase()];
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

export function scimCallerOf(request: AnyRequest): ScimCaller {
  const scim = request.auth.credentials?.app?.scim;
  if (!scim) throw new Error(`Route ${request.route.path} reads a SCIM caller but has no scim-token authentication`);
  return scim;
}

export function submitterOf(request: AnyRequest): Submitter {
  const submitter = request.auth.credentials?.app?.submitter;
  if (!submitter)
    throw new Error(`Route ${request.route.path} reads a submitter but has no publishable-key authentication`);
  return submitter;
}

export function mcpCallerOf(request: AnyRequest): McpCaller {
  const mcp = request.auth.credentials?.app?.mcp;
  if (!mcp) throw new Error(`Route ${request.route.path} reads an MCP caller but has no MCP token authentication`);
  return mcp;
}

/** Whom a request to the hosted MCP endpoint speaks for: an MCP token's caller or an API key's. */
export function mcpOrKeyCallerOf(request: AnyRequest): Caller {
  return request.auth.credentials?.app?.mcp?.caller ?? callerOf(request);
}
