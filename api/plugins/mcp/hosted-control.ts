import Joi from 'joi';
import { answerControl, ownEndpoint } from '../../../lib/mcp/control.ts';
import { defineRoute, type NoInput } from '../../route.ts';
import { mcpOrKeyCallerOf } from '../../types.ts';
import { CONTROL_HEADER } from './hosted-descriptor.ts';
import { controlAnswer, jsonRpcId, workspaceParams } from './schemas.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A JSON-RPC request is small: what the control endpoint reads of a body at most. */
const MAX_CONTROL_BYTES = 64 * 1024;

/**
 * The body as the spec describes it; the handler reads it itself, leniently (docs/mcp.md): anything
 * else, JSON or not, is read as null and answered with the descriptor.
 */
const controlRequest = Joi.alternatives(
  Joi.object({
    jsonrpc: Joi.string().description('Should be `2.0`.'),
    id: jsonRpcId.description('Echoed in the answer; null when absent.'),
    method: Joi.string().description('`initialize`, `tools/list` or `ping`; any other (or none) gets the descriptor.'),
    params: Joi.object().unknown(true).description('Not validated.'),
  })
    .unknown(true)
    .label('McpControlRequest'),
  Joi.any().description('Anything else: read as null, answered with the descriptor.'),
).label('McpControlBody');

export const hostedControlRoute = defineRoute<{ workspaceId: string }, NoInput, Buffer | null>({
  method: 'POST',
  path: '/v1/mcp/hosted/{workspaceId}',
  options: {
    id: 'mcp.control',
    auth: { strategies: ['mcp-control'] },
    description: "The workspace's hosted MCP control endpoint (JSON-RPC 2.0)",
    notes:
      "JSON-RPC 2.0, parsed leniently: a body that is not JSON counts as null. `initialize` answers `protocolVersion` `2024-11-05`, `serverInfo`, `capabilities` and the endpoint's descriptor in `service`; `tools/list` the tools, each `inputSchema` an object with empty `properties`; `ping` `{}`; each echoes `id` (null when absent). Any other method, or none, answers the bare descriptor. Success carries `X-Service-MCP-Hosted: control-v1`. The path's workspace must be the credential's (403 `forbidden` otherwise). Takes an API key or an MCP token; no scope: tools run on the transport, where each needs its `required_scope`.",
    tags: ['api', 'mcp'],
    // Any content type: a body the endpoint cannot read is null, never a 415.
    payload: { parse: false, output: 'data', maxBytes: MAX_CONTROL_BYTES, override: 'application/json' },
    plugins: {
      valise: {
        // It reads a description: not a write's budget.
        rateClass: 'read',
        audit: {
          action: 'mcp.control',
          resourceType: 'mcp_endpoint',
          resourceId: (request) => {
            const workspaceId = (request.params as { workspaceId?: unknown }).workspaceId;
            return typeof workspaceId === 'string' && UUID.test(workspaceId) ? workspaceId : null;
          },
        },
        openapi: { rawJsonBody: controlRequest, errors: [403, 413] },
      },
    },
    validate: { params: workspaceParams },
    response: { schema: controlAnswer },
  },
  handler: (request, h) => {
    const { services } = request.server.app;
    const tenant = ownEndpoint(mcpOrKeyCallerOf(request), request.params.workspaceId);
    return h
      .response(answerControl(services.config, tenant, request.payload))
      .header(CONTROL_HEADER.name, CONTROL_HEADER.value);
  },
});
