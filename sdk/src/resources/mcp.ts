import type { RequestOptions } from '../client.ts';
import type { PageRequest } from '../pagination.ts';
import type {
  CreatedMcpToken,
  CreateMcpTokenParams,
  McpControlAnswer,
  McpControlRequest,
  McpEndpointDescriptor,
  McpToken,
  RevokedMcpToken,
} from '../types.ts';
import { Resource } from './resource.ts';

/**
 * The workspace's hosted MCP endpoint: the MCP tokens (`svc_mcp_…`, scope `mcp:manage`) an MCP client
 * presents, and the control endpoint. Tools run on the transport the descriptor names, through an MCP
 * client (the official MCP SDK's `StreamableHTTPClientTransport`), not through this SDK.
 */
export class Mcp extends Resource {
  listTokens(params: { limit?: number } = {}, options?: RequestOptions): PageRequest<McpToken> {
    return this.paged('mcp.listTokens', { query: params, options });
  }

  /** The answer carries `token` (`svc_mcp_…`), shown this once. A sensitive scope needs `mfa_code`. */
  createToken(params: CreateMcpTokenParams, options?: RequestOptions): Promise<CreatedMcpToken> {
    return this.call('mcp.createToken', { body: params, options });
  }

  revokeToken(id: string, options?: RequestOptions): Promise<RevokedMcpToken> {
    return this.call('mcp.revokeToken', { params: { id }, options });
  }

  /** The endpoint's descriptor: its transport's URL and every tool with its `required_scope`. */
  describe(workspaceId: string, options?: RequestOptions): Promise<McpEndpointDescriptor> {
    return this.call('mcp.describe', { params: { workspaceId }, options });
  }

  /** One JSON-RPC request to the control endpoint (`initialize`, `tools/list`, `ping`). */
  control(workspaceId: string, message: McpControlRequest, options?: RequestOptions): Promise<McpControlAnswer> {
    return this.call('mcp.control', { params: { workspaceId }, body: message, options });
  }
}
