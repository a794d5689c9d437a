import type { IncomingMessage, RequestListener } from 'node:http';
import type { Request, Server } from '@hapi/hapi';
import { context, type Span, trace } from '@opentelemetry/api';
import hapiPino from 'hapi-pino';
import type { Logger } from 'pino';
import { httpRequestDuration, httpRequests } from '../lib/observability/metrics.ts';
import {
  endRequestSpan,
  REQUEST_ID_ATTRIBUTE,
  startRequestSpan,
  type Tracing,
  WORKSPACE_ATTRIBUTE,
} from '../lib/observability/tracing.ts';
import type { AnyRequest } from './types.ts';

// What the API tells operators about each request (docs/operations.md): a log line, the request
// metrics and, when tracing is on, a span that the workflows it starts continue. Labelled by the
// route template (`/v1/transfers/{id}`), never the raw path: one series per route, and no id or
// token (download and upload paths carry capability tokens) in a metric or a log line.

/** The workspace a request spoke for, once authenticated (an API key, a publishable key or a SCIM token). */
function workspaceOf(request: AnyRequest): string | undefined {
  const app = request.auth.credentials?.app;
  return app?.caller?.workspaceId ?? app?.submitter?.workspaceId ?? app?.scim?.workspaceId;
}

/**
 * Registers the request log (hapi-pino, bound to the request id), the request metrics and the
 * request spans. Call on the server createServer returned, before it starts.
 */
export async function observeRequests(server: Server, options: { logger: Logger; tracing: Tracing | null }) {
  const spans = options.tracing ? traceRequests(server, options.tracing) : null;
  await server.register({
    plugin: hapiPino,
    options: {
      instance: options.logger,
      // The request id only: the request's URL and headers are never logged (tokens, keys).
      getChildBindings: (request: Request) => ({ requestId: request.app.requestId }),
      logRequestStart: false,
      // Logged below, with the route template and the workspace, which are known only then.
      logRequestComplete: false,
      logPayload: false,
    },
  });

  server.events.on('response', (request) => {
    const method = request.method.toUpperCase();
    const route = request.route.path;
    const status = request.raw.res.statusCode;
    const seconds = ((request.info.completed || request.info.responded || Date.now()) - request.info.received) / 1000;
    httpRequests.inc({ method, route, status: String(status) });
    httpRequestDuration.observe({ method, route, status_class: `${Math.floor(status / 100)}xx` }, seconds);
    const workspace = workspaceOf(request);
    const span = spans?.get(request.raw.req);
    if (span) {
      span.setAttribute(REQUEST_ID_ATTRIBUTE, request.app.requestId);
      if (workspace) span.setAttribute(WORKSPACE_ATTRIBUTE, workspace);
      endRequestSpan(span, { method, route, status });
    }
    const line = { method, route, status, workspace, ms: Math.round(seconds * 1000) };
    // A request that never went through onRequest (refused by hapi before it) has no logger of its own.
    const log = request.logger ?? options.logger.child({ requestId: request.app.requestId });
    if (status >= 500) log.error(line, 'request failed');
    else log.info(line, 'request completed');
  });
}

/**
 * Runs each request's whole hapi lifecycle inside its span's context, so that the workflow starts
 * its handler makes are the span's children (hapi offers no hook that wraps the lifecycle: the
 * Node listener it installed is wrapped instead). Answers the span of each raw request.
 */
function traceRequests(server: Server, tracing: Tracing): WeakMap<IncomingMessage, Span> {
  const spans = new WeakMap<IncomingMessage, Span>();
  const listener = server.listener;
  const handlers = listener.listeners('request') as RequestListener[];
  listener.removeAllListeners('request');
  listener.on('request', (req, res) => {
    const span = startRequestSpan(tracing, req.method ?? 'GET');
    spans.set(req, span);
    context.with(trace.setSpan(context.active(), span), () => {
      for (const handler of handlers) handler.call(listener, req, res);
    });
  });
  return spans;
}
