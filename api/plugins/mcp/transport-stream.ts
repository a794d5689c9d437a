import { defineRoute } from '../../route.ts';
import { mcpCallerOf } from '../../types.ts';

// Streamable HTTP lets a client open a stream for what the server sends unasked (GET) and end a
// session (DELETE). The transport is stateless and sends nothing unasked, so both answer 405 as the
// protocol says (the official client then carries on without a stream). Not an API operation: no
// OpenAPI entry, and the body is the protocol's JSON-RPC error, as the MCP SDK's stateless servers send.
export const transportStreamRoute = defineRoute<{ workspaceId: string }>({
  method: ['GET', 'DELETE'],
  path: '/v1/mcp/hosted/{workspaceId}/transport',
  options: { auth: { strategies: ['mcp-token'] } },
  handler: (request, h) => {
    mcpCallerOf(request);
    return h
      .response({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null })
      .code(405)
      .header('Allow', 'POST');
  },
});
