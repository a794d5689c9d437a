import type { RouteOptions, ServerRoute } from '@hapi/hapi';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { holdsScope } from '../../../lib/api-keys/scopes.ts';
import { DomainError } from '../../../lib/errors.ts';
import { auditToolCall, type ToolCallOrigin } from '../../../lib/mcp/audit.ts';
import { MCP_SERVICE_NAME, MCP_SERVICE_VERSION } from '../../../lib/mcp/control.ts';
import type { McpCaller } from '../../../lib/mcp/tokens.ts';
import { MCP_TOOLS } from '../../../lib/mcp/tools.ts';
import { rateLimitExceeded } from '../../auth.ts';
import { clientIp } from '../../client-ip.ts';
import { answerTo, renderError } from '../../errors.ts';
import { tenantBudget } from '../../extensions/guard.ts';
import { type AnyRequest, headerOf, type RateClass } from '../../types.ts';
import { TOOL_IMPLEMENTATIONS } from './tools.ts';

// The hosted transport (docs/mcp.md, "The transport"): the official SDK's McpServer behind its
// web-standard Streamable HTTP transport, stateless (a server and a transport per request, nothing
// kept between requests, so any API process answers any request) and answering JSON rather than an
// event stream. Tools run as the token's caller, each only with its `required_scope`.

/** The MCP request's answer: its status, its content type and its body, as the transport wrote them. */
export type TransportAnswer = { status: number; contentType: string | null; body: string };

/** What a tool call answers: its result as JSON text (and structured), or the API's refusal as a tool error. */
function toolResult(value: unknown): CallToolResult {
  const text = JSON.stringify(value);
  const structured = JSON.parse(text) as unknown;
  return {
    content: [{ type: 'text', text }],
    ...(structured && typeof structured === 'object' && !Array.isArray(structured)
      ? { structuredContent: structured as Record<string, unknown> }
      : {}),
  };
}

/**
 * A refusal as a tool error: the envelope the route would answer (api/errors.ts), with its
 * `doc_url` and `request_id`; a tool error has no headers, so a `Retry-After` rides along as
 * `retry_after_seconds`.
 */
function toolError(request: AnyRequest, error: DomainError): CallToolResult {
  const { docsBaseUrl } = request.server.app.services.config.api;
  const { body } = renderError(error, request.app.requestId, docsBaseUrl);
  const retry = error.retryAfterSeconds === undefined ? {} : { retry_after_seconds: error.retryAfterSeconds };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { ...body.error, ...retry } }) }] };
}

async function callTool(
  request: AnyRequest,
  mcp: McpCaller,
  info: (typeof MCP_TOOLS)[number],
  args: Record<string, unknown>,
) {
  const { services } = request.server.app;
  const origin: ToolCallOrigin = {
    ip: clientIp(request, services.config),
    userAgent: headerOf(request, 'user-agent') ?? null,
    requestId: request.app.requestId,
  };
  const outcome = { tool: info.name, requiredScope: info.requiredScope };
  try {
    if (!holdsScope(mcp.caller.keyType, mcp.caller.scopes, info.requiredScope)) {
      throw new DomainError('scope_missing', `This MCP token lacks the \`${info.requiredScope}\` scope.`, {
        details: { required_scope: info.requiredScope },
      });
    }
    const implementation = TOOL_IMPLEMENTATIONS[outcome.tool];
    // The transport's POST drew from the read budget (it is a protocol message); a tool whose route is
    // of another class (a write, an expensive read) draws from that budget as well, as the route would.
    const rateClass = rateClassOf(implementation.route);
    if (rateClass !== 'read') {
      const budget = tenantBudget(request, mcp.caller, rateClass);
      const drawn = await request.server.app.rateLimiter.take(budget.bucket, budget.limit);
      if (!drawn.allowed) throw rateLimitExceeded(drawn, rateClass);
    }
    const ran = await implementation.run({ services, caller: mcp.caller }, args);
    await auditToolCall(services, mcp, origin, {
      ...outcome,
      statusCode: 200,
      errorCode: null,
      resourceId: ran.resourceId,
    });
    return toolResult(ran.result);
  } catch (error) {
    if (!(error instanceof DomainError)) {
      request.log(['error', 'mcp'], error as Error);
      await auditToolCall(services, mcp, origin, {
        ...outcome,
        statusCode: 500,
        errorCode: 'internal_error',
        resourceId: null,
      });
      return toolError(request, new DomainError('internal_error', 'Something went wrong on our side.'));
    }
    await auditToolCall(services, mcp, origin, {
      ...outcome,
      statusCode: answerTo(error).status,
      errorCode: error.code,
      resourceId: null,
    });
    return toolError(request, error);
  }
}

/** A route's class of rate budget, as the guard reads it (api/extensions/guard.ts). */
function rateClassOf(route: ServerRoute): RateClass {
  const declared = (route.options as RouteOptions).plugins?.valise?.rateClass;
  return declared ?? (String(route.method).toLowerCase() === 'get' ? 'read' : 'write');
}

/** An MCP server offering every tool of the catalog, for one request of one caller. */
function serverFor(request: AnyRequest, mcp: McpCaller): McpServer {
  const server = new McpServer(
    { name: MCP_SERVICE_NAME, version: MCP_SERVICE_VERSION },
    { capabilities: { tools: { listChanged: false } } },
  );
  for (const info of MCP_TOOLS) {
    const implementation = TOOL_IMPLEMENTATIONS[info.name];
    server.registerTool(
      info.name,
      {
        description: `${info.description} Requires the \`${info.requiredScope}\` scope.`,
        inputSchema: implementation.input,
        annotations: { readOnlyHint: implementation.readOnly, openWorldHint: false },
        _meta: { required_scope: info.requiredScope },
      },
      (args: Record<string, unknown>) => callTool(request, mcp, info, args),
    );
  }
  return server;
}

/** Answers one Streamable HTTP POST: its JSON-RPC message (or batch) run through a fresh server. */
export async function answerTransport(request: AnyRequest, mcp: McpCaller, body: Buffer): Promise<TransportAnswer> {
  const server = serverFor(request, mcp);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    const headers = new Headers();
    for (const name of ['accept', 'content-type', 'mcp-protocol-version']) {
      const value = headerOf(request, name);
      if (value !== undefined) headers.set(name, value);
    }
    const url = `http://${request.info.host || 'localhost'}${request.path}`;
    const response = await transport.handleRequest(new Request(url, { method: 'POST', headers, body }));
    return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
  } finally {
    await server.close();
  }
}

/**
 * A request the transport refused at the HTTP level (an `Accept` without both JSON and event streams,
 * bytes that are no JSON-RPC message, a missing `Mcp-Protocol-Version`): the API's 400, with the
 * transport's reason, so that every refusal of the API has the one envelope.
 */
export function transportRefusal(answer: TransportAnswer): DomainError {
  let reason = 'The MCP transport refused the request.';
  try {
    const parsed = JSON.parse(answer.body) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') reason = parsed.error.message;
  } catch {
    // Not JSON: the generic reason.
  }
  return new DomainError('validation_error', reason, { param: answer.status === 406 ? 'Accept' : null });
}
