import type { Config } from '../config.ts';
import { DomainError } from '../errors.ts';
import type { Tenant } from '../tenancy.ts';
import { MCP_TOOLS } from './tools.ts';

// The hosted MCP control endpoint (docs/mcp.md, "The control endpoint"): a JSON-RPC 2.0 entry point
// that describes the workspace's endpoint and answers `initialize`, `tools/list` and `ping` itself,
// as the spec fixes them. Tools do not run here; they run on the transport the descriptor names.

/** The protocol revision the control endpoint speaks (the spec fixes it). */
export const CONTROL_PROTOCOL_VERSION = '2024-11-05';
export const MCP_SERVICE_NAME = 'valise';
export const MCP_SERVICE_VERSION = '1.0.0';

/** The workspace's endpoint, if the credential's workspace is the path's; 403 `forbidden` otherwise. */
export function ownEndpoint(tenant: Tenant, workspaceId: string): Tenant {
  if (workspaceId !== tenant.workspaceId) {
    throw new DomainError('forbidden', "This credential does not belong to that workspace's MCP endpoint.", {
      param: 'workspaceId',
    });
  }
  return tenant;
}

/** What the endpoint is: its workspace, protocol, transport and tools with the scope each needs. */
export function endpointDescriptor(config: Config, tenant: Tenant) {
  const endpoint = `${config.api.publicBaseUrl}/v1/mcp/hosted/${tenant.workspaceId}`;
  return {
    object: 'mcp_endpoint' as const,
    workspace_id: tenant.workspaceId,
    environment: tenant.environment,
    service: { name: MCP_SERVICE_NAME, version: MCP_SERVICE_VERSION },
    protocol_version: CONTROL_PROTOCOL_VERSION,
    endpoint_url: endpoint,
    transport: {
      type: 'streamable-http' as const,
      url: `${endpoint}/transport`,
      authentication: 'Authorization: Bearer svc_mcp_…',
    },
    tools: MCP_TOOLS.map((tool) => ({
      name: tool.name,
      description: tool.description,
      required_scope: tool.requiredScope,
    })),
  };
}

export type EndpointDescriptor = ReturnType<typeof endpointDescriptor>;

/** A JSON-RPC id as the spec echoes it: a number, a string or null (null when absent or of another type). */
function echoedId(message: Record<string, unknown>): string | number | null {
  const { id } = message;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/** The body as JSON, leniently: bytes that are not JSON are null (the spec), never an error. */
function parseLeniently(raw: Buffer | string | null): unknown {
  if (raw === null) return null;
  try {
    return JSON.parse(raw.toString()) as unknown;
  } catch {
    return null;
  }
}

/**
 * Answers one control request: `initialize`, `tools/list` and `ping` in a JSON-RPC envelope echoing
 * the id; anything else (another method, no method, a body that is not a JSON object) gets the bare
 * descriptor.
 */
export function answerControl(config: Config, tenant: Tenant, raw: Buffer | string | null) {
  const body = parseLeniently(raw);
  const message =
    body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const descriptor = endpointDescriptor(config, tenant);
  const envelope = (result: Record<string, unknown>) => ({ jsonrpc: '2.0' as const, id: echoedId(message), result });
  switch (message.method) {
    case 'initialize':
      return envelope({
        protocolVersion: CONTROL_PROTOCOL_VERSION,
        serverInfo: { name: MCP_SERVICE_NAME, version: MCP_SERVICE_VERSION },
        capabilities: { tools: { listChanged: false }, resources: {}, prompts: {} },
        service: descriptor,
      });
    case 'tools/list':
      return envelope({
        tools: MCP_TOOLS.map((tool) => ({
          name: tool.name,
          description: tool.description,
          inputSchema: { type: 'object', properties: {} },
        })),
      });
    case 'ping':
      return envelope({});
    default:
      return descriptor;
  }
}
