import type { Scope } from '../api-keys/scopes.ts';

// The tools the hosted MCP transport runs (docs/mcp.md, "Tools"), declared once: their names, what an
// MCP client is told they do, and the scope each needs, which the token must hold when the tool runs.
// The descriptor, the control endpoint's `tools/list` and the transport (api/plugins/mcp/tools.ts,
// which implements each name) all read this list.

export type McpToolInfo = { name: string; description: string; requiredScope: Scope };

export const MCP_TOOLS = [
  {
    name: 'list_transfers',
    description:
      'List or search the transfers of the workspace, newest first: `search` matches the title, short code or recipient; `status` filters; `cursor` pages.',
    requiredScope: 'transfers:read',
  },
  {
    name: 'create_transfer',
    description:
      'Create a transfer from a list of files (name, size in bytes, MIME type); returns the transfer, its share URL and one upload URL per file, to PUT each file to.',
    requiredScope: 'transfers:write',
  },
  {
    name: 'get_transfer_status',
    description:
      "A transfer's status and download state: its files' upload and scan states, downloads made and allowed, and whether a recipient can download it now (and if not, why).",
    requiredScope: 'transfers:read',
  },
  {
    name: 'revoke_transfer',
    description: 'Revoke a transfer: it stops downloading at once and its files are deleted.',
    requiredScope: 'transfers:manage',
  },
  {
    name: 'list_intakes',
    description: 'List the secure intakes (file requests) of the workspace, newest first.',
    requiredScope: 'intake:read',
  },
  {
    name: 'list_intake_documents',
    description: "List an intake's received documents, newest first, with their files.",
    requiredScope: 'intake:read',
  },
  {
    name: 'list_vaults',
    description: 'List the vaults (data rooms) of the workspace, newest first.',
    requiredScope: 'coffres:read',
  },
  {
    name: 'list_vault_items',
    description: "List a vault's items, newest first.",
    requiredScope: 'coffres:read',
  },
  {
    name: 'search_audit_log',
    description:
      'Search the audit log of the workspace, newest first, by action, actor, resource type and time window.',
    requiredScope: 'audit:read',
  },
  {
    name: 'analytics_summary',
    description:
      'Transfers created, bytes sent, downloads, unique recipients and completion rate over a window (default the last 30 days), with each day.',
    requiredScope: 'analytics:read',
  },
] as const satisfies readonly McpToolInfo[];

export type McpToolName = (typeof MCP_TOOLS)[number]['name'];
