import { endpointDescriptor, ownEndpoint } from '../../../lib/mcp/control.ts';
import { defineRoute } from '../../route.ts';
import { mcpOrKeyCallerOf } from '../../types.ts';
import { endpointDescriptor as descriptorSchema, workspaceParams } from './schemas.ts';

/** The header every successful answer of the control endpoint carries (the spec's), and its value. */
export const CONTROL_HEADER = { name: 'X-Service-MCP-Hosted', value: 'control-v1' } as const;

export const hostedDescriptorRoute = defineRoute<{ workspaceId: string }>({
  method: 'GET',
  path: '/v1/mcp/hosted/{workspaceId}',
  options: {
    id: 'mcp.describe',
    auth: { strategies: ['mcp-control'] },
    description: "The workspace's hosted MCP endpoint descriptor (health probe)",
    notes:
      "What the control endpoint answers to any method but `initialize`, `tools/list` and `ping`: the workspace and environment, the service, the protocol revision, the transport (its URL and type) and every tool with its `required_scope`. Carries `X-Service-MCP-Hosted: control-v1`. The path's workspace must be the credential's (403 `forbidden` otherwise). Takes an API key or an MCP token; no scope.",
    tags: ['api', 'mcp'],
    plugins: { valise: { openapi: { errors: [403] } } },
    validate: { params: workspaceParams },
    response: { schema: descriptorSchema },
  },
  handler: (request, h) => {
    const { services } = request.server.app;
    const tenant = ownEndpoint(mcpOrKeyCallerOf(request), request.params.workspaceId);
    return h.response(endpointDescriptor(services.config, tenant)).header(CONTROL_HEADER.name, CONTROL_HEADER.value);
  },
});
