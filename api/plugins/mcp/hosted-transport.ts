import { ownEndpoint } from '../../../lib/mcp/control.ts';
import { defineRoute, type NoInput } from '../../route.ts';
import { mcpCallerOf } from '../../types.ts';
import { answerTransport, transportRefusal } from './mcp-server.ts';
import { transportAnswer, transportMessage, workspaceParams } from './schemas.ts';

/** A JSON-RPC message or batch of them; the SDK's own default bound is 4 MiB, tool calls are far smaller. */
const MAX_MESSAGE_BYTES = 1024 * 1024;

export const hostedTransportRoute = defineRoute<{ workspaceId: string }, NoInput, Buffer | null>({
  method: 'POST',
  path: '/v1/mcp/hosted/{workspaceId}/transport',
  options: {
    id: 'mcp.transport',
    auth: { strategies: ['mcp-token'] },
    description: "The workspace's hosted MCP transport (Streamable HTTP)",
    notes:
      "MCP's Streamable HTTP transport (stateless, JSON answers): connect an MCP client here with `Authorization: Bearer svc_mcp_…`. `tools/call` runs a tool as the token's caller; a tool whose `required_scope` the token lacks answers a tool error (`isError`) naming the scope. A notification alone is accepted with 202 and no body. The path's workspace must be the token's (403 `forbidden` otherwise). No server-initiated stream: GET answers 405.",
    tags: ['api', 'mcp'],
    payload: { parse: false, output: 'data', maxBytes: MAX_MESSAGE_BYTES, allow: ['application/json'] },
    plugins: {
      valise: {
        // A protocol message: each tool also draws from its own route's budget (docs/mcp.md, "Rate limits").
        rateClass: 'read',
        sdk: { excluded: "the MCP protocol: its clients are MCP clients (the official MCP SDK's among them)" },
        openapi: {
          rawJsonBody: transportMessage,
          errors: [403, 413, 415],
          statuses: { 202: 'Notifications or responses only: accepted, no body.' },
        },
      },
    },
    validate: { params: workspaceParams },
    response: { status: { 200: transportAnswer } },
  },
  handler: async (request, h) => {
    const mcp = mcpCallerOf(request);
    ownEndpoint(mcp.caller, request.params.workspaceId);
    const answer = await answerTransport(request, mcp, request.payload ?? Buffer.alloc(0));
    if (answer.status >= 400) throw transportRefusal(answer);
    if (answer.body === '') return h.response().code(answer.status);
    return h
      .response(JSON.parse(answer.body) as object)
      .code(answer.status)
      .type('application/json');
  },
});
