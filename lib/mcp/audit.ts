import { createAuditQueries } from '../db/queries/audit.ts';
import type { Services } from '../services.ts';
import type { McpCaller } from './tokens.ts';
import type { McpToolName } from './tools.ts';

// Every tool call on the hosted transport leaves an audit entry (docs/mcp.md, "Audit"), as an API
// call that changes something does, successful or refused: the member the token acts for, the key
// that issued it, the tool, and the status and error code the same refusal gets from the API. The
// tool's arguments are never recorded (a transfer's password is one).

export type ToolCallOrigin = { ip: string; userAgent: string | null; requestId: string };

export type ToolCallOutcome = {
  tool: McpToolName;
  requiredScope: string;
  /** The HTTP status the same call answers through the API: 200, or its refusal's. */
  statusCode: number;
  errorCode: string | null;
  /** The resource the call named or created, when it is one. */
  resourceId: string | null;
};

export async function auditToolCall(
  services: Services,
  mcp: McpCaller,
  origin: ToolCallOrigin,
  outcome: ToolCallOutcome,
) {
  const { caller } = mcp;
  await createAuditQueries(services.db).insert({
    workspaceId: caller.workspaceId,
    environment: caller.environment,
    actorId: caller.userId,
    apiKeyId: caller.apiKeyId,
    action: 'mcp.tool_call',
    resourceType: 'mcp_tool',
    resourceId: outcome.resourceId,
    ipAddress: origin.ip,
    userAgent: origin.userAgent?.slice(0, 512) ?? null,
    status: outcome.statusCode < 400 ? 'success' : 'failure',
    requestId: origin.requestId,
    metadata: {
      tool: outcome.tool,
      mcp_token_id: mcp.tokenId,
      required_scope: outcome.requiredScope,
      status_code: outcome.statusCode,
      ...(outcome.errorCode ? { error_code: outcome.errorCode } : {}),
    },
  });
}
