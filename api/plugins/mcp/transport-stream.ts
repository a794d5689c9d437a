import Joi from 'joi';
import { ownEndpoint } from '../../../lib/mcp/control.ts';
import { defineRoute } from '../../route.ts';
import { mcpCallerOf } from '../../types.ts';
import { workspaceParams } from './schemas.ts';

// Streamable HTTP lets a client open a stream for what the server sends unasked (GET) and end a
// session (DELETE). The transport is stateless and sends nothing unasked, so both answer 405 as the
// protocol says (the official client then carries on without a stream), with the protocol's JSON-RPC
// error as the body, as the MCP SDK's stateless servers send it. In the OpenAPI document all the same:
// a client generated from it knows the methods exist and what they answer.

const notAllowed = Joi.object({
  jsonrpc: Joi.string().valid('2.0').required(),
  error: Joi.object({ code: Joi.number().integer().required(), message: Joi.string().required() }).required(),
  id: Joi.valid(null).required(),
}).label('McpMethodNotAllowed');

const ANSWER = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null } as const;

function notAllowedRoute(method: 'GET' | 'DELETE', id: string, description: string) {
  return defineRoute<{ workspaceId: string }>({
    method,
    path: '/v1/mcp/hosted/{workspaceId}/transport',
    options: {
      id,
      auth: { strategies: ['mcp-token'] },
      description,
      notes:
        'Always 405 with `Allow: POST`, for an MCP token of this workspace: the hosted transport is stateless and sends nothing unasked, so it keeps no stream and no session (docs/mcp.md, "The transport"). The official MCP client reads the 405 and goes on with POST alone.',
      tags: ['api', 'mcp'],
      plugins: {
        valise: {
          rateClass: 'read',
          sdk: { excluded: "the MCP protocol: its clients are MCP clients (the official MCP SDK's among them)" },
          openapi: {
            statuses: { 405: 'Always: the transport keeps no stream or session. `Allow: POST`.' },
            responseHeaders: { 405: { Allow: '`POST`: the only method the transport takes.' } },
          },
        },
      },
      validate: { params: workspaceParams },
      response: { status: { 405: notAllowed } },
    },
    handler: (request, h) => {
      ownEndpoint(mcpCallerOf(request).caller, request.params.workspaceId);
      return h.response(ANSWER).code(405).header('Allow', 'POST');
    },
  });
}

export const transportStreamRoute = notAllowedRoute(
  'GET',
  'mcp.transportStream',
  "The transport's server-sent stream: none (405)",
);
export const transportSessionEndRoute = notAllowedRoute(
  'DELETE',
  'mcp.transportSessionEnd',
  'Ending a transport session: there is none (405)',
);
