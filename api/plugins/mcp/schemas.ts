import Joi from 'joi';
import { CONTROL_PROTOCOL_VERSION, MCP_SERVICE_NAME, MCP_SERVICE_VERSION } from '../../../lib/mcp/control.ts';
import { MCP_TOOLS } from '../../../lib/mcp/tools.ts';
import { ENVIRONMENTS } from '../../../lib/vocabulary.ts';
import { id, listEnvelope, scope, text, timestamp } from '../../schemas.ts';

/** The path's workspace: any text (compared with the credential's, 403 otherwise), never a lookup. */
export const workspaceParams = Joi.object<{ workspaceId: string }>({
  workspaceId: text.max(100).required().description("The workspace's id: the credential's own, else 403."),
});

const toolName = Joi.string().valid(...MCP_TOOLS.map((tool) => tool.name));

export const endpointDescriptor = Joi.object({
  object: Joi.string().valid('mcp_endpoint').required(),
  workspace_id: id.required(),
  environment: Joi.string()
    .valid(...ENVIRONMENTS)
    .required(),
  service: Joi.object({
    name: Joi.string().valid(MCP_SERVICE_NAME).required(),
    version: Joi.string().valid(MCP_SERVICE_VERSION).required(),
  })
    .required()
    .label('McpService'),
  protocol_version: Joi.string().valid(CONTROL_PROTOCOL_VERSION).required(),
  endpoint_url: Joi.string().uri().required(),
  transport: Joi.object({
    type: Joi.string().valid('streamable-http').required(),
    url: Joi.string().uri().required(),
    authentication: Joi.string().required(),
  })
    .required()
    .label('McpTransport'),
  tools: Joi.array()
    .items(
      Joi.object({
        name: toolName.required(),
        description: Joi.string().required(),
        required_scope: scope.required(),
      }).label('McpToolDescription'),
    )
    .required(),
}).label('McpEndpointDescriptor');

/**
 * A JSON-RPC id: a string, a number or null. Each alternative allows null itself: joi-to-json writes an
 * `alternatives().allow(null)` as "one of them and null at once", which nothing matches.
 */
export const jsonRpcId = Joi.alternatives(Joi.string().allow(null), Joi.number().allow(null));

/** What the control endpoint answers: a JSON-RPC 2.0 result (initialize, tools/list, ping), or the bare descriptor. */
export const controlAnswer = Joi.alternatives(
  Joi.object({
    jsonrpc: Joi.string().valid('2.0').required(),
    id: jsonRpcId.required(),
    result: Joi.object({
      protocolVersion: Joi.string().valid(CONTROL_PROTOCOL_VERSION),
      serverInfo: Joi.object({ name: Joi.string().required(), version: Joi.string().required() }).label(
        'McpServerInfo',
      ),
      capabilities: Joi.object({
        tools: Joi.object().unknown(true).required(),
        resources: Joi.object().unknown(true).required(),
        prompts: Joi.object().unknown(true).required(),
      }).label('McpCapabilities'),
      service: endpointDescriptor,
      tools: Joi.array().items(
        Joi.object({
          name: toolName.required(),
          description: Joi.string().required(),
          inputSchema: Joi.object({
            type: Joi.string().valid('object').required(),
            properties: Joi.object().max(0).required(),
          })
            .required()
            .label('McpInputSchema'),
        }).label('McpControlTool'),
      ),
    })
      .required()
      .label('McpControlResult'),
  }).label('McpControlResponse'),
  endpointDescriptor,
).label('McpControlAnswer');

/** A JSON-RPC 2.0 message the transport answers (MCP, Streamable HTTP): a result or an error, alone or in a batch. */
const jsonRpcResponse = Joi.alternatives(
  Joi.object({
    jsonrpc: Joi.string().valid('2.0').required(),
    id: jsonRpcId.required(),
    result: Joi.object().unknown(true).required(),
  }).label('JsonRpcResult'),
  Joi.object({
    jsonrpc: Joi.string().valid('2.0').required(),
    id: jsonRpcId.required(),
    error: Joi.object({ code: Joi.number().integer().required(), message: Joi.string().required() })
      .unknown(true)
      .required()
      .label('JsonRpcErrorObject'),
  }).label('JsonRpcError'),
).label('JsonRpcResponse');
/** What an MCP client POSTs to the transport: a JSON-RPC request or notification, or a batch of them. */
const jsonRpcMessage = Joi.object({
  jsonrpc: Joi.string().valid('2.0').required(),
  id: jsonRpcId.description('Absent for a notification.'),
  method: Joi.string().required().description('`initialize`, `tools/list`, `tools/call`, `ping`, notifications…'),
  params: Joi.object().unknown(true),
})
  .unknown(true)
  .label('JsonRpcMessage');
export const transportMessage = Joi.alternatives(jsonRpcMessage, Joi.array().items(jsonRpcMessage).min(1)).label(
  'McpTransportMessage',
);

export const transportAnswer = Joi.alternatives(jsonRpcResponse, Joi.array().items(jsonRpcResponse)).label(
  'McpTransportAnswer',
);

export const mcpToken = Joi.object({
  id: id.required(),
  object: Joi.string().valid('mcp_token').required(),
  name: Joi.string().allow('').required(),
  token_prefix: Joi.string().required().description('`svc_mcp_` and six characters, as lists show it.'),
  scopes: Joi.array().items(Joi.string()).required(),
  environment: Joi.string()
    .valid(...ENVIRONMENTS)
    .required(),
  is_active: Joi.boolean().required().description('Neither revoked nor expired.'),
  expires_at: timestamp.allow(null).required(),
  last_used_at: timestamp.allow(null).required().description('Within a minute.'),
  revoked_at: timestamp.allow(null).required(),
  created_at: timestamp.required(),
}).label('McpToken');

export const mcpTokenWithValue = mcpToken
  .keys({
    token: Joi.string()
      .pattern(/^svc_mcp_[0-9A-Za-z]{40}$/)
      .required()
      .description('The bearer token for the MCP client. Shown once only.'),
    warning: Joi.string().required(),
  })
  .label('McpTokenWithValue');

export const revokedMcpToken = mcpToken
  .keys({ revoked: Joi.boolean().valid(true).required() })
  .label('RevokedMcpToken');

export const mcpTokenList = listEnvelope(mcpToken, 'McpTokenList');
