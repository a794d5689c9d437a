import type { Lifecycle, ResponseToolkit, RouteOptions, RouteOptionsValidate, ServerRoute } from '@hapi/hapi';
import type Joi from 'joi';
import type { AnyRequest } from './types.ts';

// A route's inputs are typed from its joi schemas: each schema is written `Joi.object<T>({ … })`
// with T the domain's own input type (joi checks every key against T at compile time), and the
// handler receives `request.params`, `request.query` and `request.payload` typed as those T.
// hapi still validates with the very same joi objects, and the OpenAPI document still reads them.

/** What a route without a params or query schema may read there: nothing. */
export type NoInput = Record<string, never>;

/** The request a route's handler sees: its inputs as its joi schemas let them through. */
export type TypedRequest<Params, Query, Payload> = AnyRequest & { params: Params; query: Query; payload: Payload };

/** An untyped `Joi.object({ … })` is `ObjectSchema<any>`: refused, so that every input has a type. */
type Typed<T> = 0 extends 1 & T ? { 'write the schema Joi.object<InputType>({ … })': never } : unknown;

type TypedValidate<Params, Query, Payload> = Omit<RouteOptionsValidate, 'params' | 'query' | 'payload'> & {
  params?: Joi.ObjectSchema<Params> & Typed<Params>;
  query?: Joi.ObjectSchema<Query> & Typed<Query>;
  payload?: Joi.ObjectSchema<Payload> & Typed<Payload>;
};

export type TypedRoute<Params, Query, Payload> = Omit<ServerRoute, 'options' | 'handler'> & {
  options: Omit<RouteOptions, 'validate' | 'handler'> & { validate?: TypedValidate<Params, Query, Payload> };
  handler: (request: TypedRequest<Params, Query, Payload>, h: ResponseToolkit) => Lifecycle.ReturnValue;
};

/**
 * A route whose handler's `request.params`, `request.query` and `request.payload` have the types of
 * its `options.validate` schemas. A route without a schema for one of them sees no keys (params,
 * query) or `never` (payload) there, unless it names the type itself (e.g. a streamed payload).
 */
export function defineRoute<Params = NoInput, Query = NoInput, Payload = never>(
  route: TypedRoute<Params, Query, Payload>,
): ServerRoute {
  // hapi has validated (and converted) params, query and payload with these schemas before the
  // handler runs, so the handler may see them as the schemas' types: the one place this is asserted.
  return route as unknown as ServerRoute;
}

/** An object schema that also accepts `null` (an optional JSON body: hapi hands the handler `null`). */
export function orNull<T>(schema: Joi.ObjectSchema<T>): Joi.ObjectSchema<T | null> {
  return schema.allow(null);
}
