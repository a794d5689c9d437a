import { ownEndpoint } from '../../../lib/mcp/control.ts';
import { defineRoute } from '../../route.ts';
import { mcpCallerOf } from '../../types.ts';
import { workspaceParams } from './schemas.ts';

// Streamable HTTP lets a client open a stream for what the server sends unasked (GET) and end a
// session (DELETE). The transport is stateless and sends nothing unasked, so both answer 405 as the
// protocol says (the official client then carries on without a stream), with the protocol's JSON-RPC
// error as the body, as the MCP SDK's stateless servers send it. Not operations of the OpenAPI
// document: an operation that can only fail would give generated clients methods that always throw
// (redocly's operation-2xx-response); the POST operation's description says GET and DELETE answer 405.
export const transportStreamRoute = defineRoute<{ workspaceId: string }>({
  method: ['GET', 'DELETE'],
  path: '/v1/mcp/hosted/{workspaceId}/transport',
  options: { auth: { strategies: ['mcp-token'] }, validate: { params: workspaceParams } },
  handler: (request, h) => {
    ownEndpoint(mcpCallerOf(request).caller, request.params.workspaceId);
    return h
      .response({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null })
      .code(405)
      .header('Allow', 'POST');
  },
});
