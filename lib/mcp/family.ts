import type { Family } from '../family.ts';

// The hosted MCP endpoint (docs/mcp.md): the control endpoint and the transport read other families'
// rows through their domain functions; the family keeps only its tokens. A token names its member
// (`user_id`) but holds nothing about them beyond that id, so it carries no personal data.
export const mcpFamily = {
  name: 'mcp',
  openapi: {
    tag: 'mcp',
    description:
      'The hosted MCP (Model Context Protocol) endpoint of a workspace: its JSON-RPC control endpoint and descriptor, the MCP tokens (`svc_mcp_…`) an MCP client presents, and the Streamable HTTP transport on which tools run.',
  },
  tables: {
    mcp_tokens: { scope: { kind: 'tenant' }, personal: [] },
  },
} satisfies Family;
