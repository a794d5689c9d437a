import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import type { PageWindow } from '../../pagination.ts';
import type { Tenant } from '../../tenancy.ts';
import { ENVIRONMENTS } from '../../vocabulary.ts';
import { olderThanCursor } from '../paging.ts';
import { sql } from '../sql.ts';

// MCP tokens (docs/mcp.md, "Tokens"): every query a request reaches is filtered by workspace and
// environment, except the lookup by the value's hash, which is how a token finds its tenant.

export const mcpTokenRow = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  name: z.string(),
  token_prefix: z.string(),
  scopes: z.array(z.string()),
  user_id: z.uuid(),
  issued_by_api_key_id: z.uuid(),
  expires_at: z.date().nullable(),
  last_used_at: z.date().nullable(),
  revoked_at: z.date().nullable(),
  created_at: z.date(),
});
export type McpTokenRow = z.infer<typeof mcpTokenRow>;

/** A token found by its value: the row, its hash, and whether the member it acts for is still active. */
const mcpTokenCredential = mcpTokenRow.extend({ token_hash: z.instanceof(Buffer), user_active: z.boolean() });
export type McpTokenCredential = z.infer<typeof mcpTokenCredential>;

export type NewMcpToken = {
  name: string;
  hash: Buffer;
  prefix: string;
  scopes: readonly string[];
  userId: string;
  issuedByApiKeyId: string;
  expiresAt: Date | null;
};

const columns = sql.fragment`
  t.id, t.workspace_id, t.environment, t.name, t.token_prefix, t.scopes, t.user_id, t.issued_by_api_key_id,
  t.expires_at, t.last_used_at, t.revoked_at, t.created_at`;

export function createMcpTokenQueries(db: CommonQueryMethods) {
  return {
    async insert(tenant: Tenant, token: NewMcpToken): Promise<McpTokenRow> {
      return db.one(sql.type(mcpTokenRow)`
        INSERT INTO mcp_tokens AS t
          (workspace_id, environment, name, token_hash, token_prefix, scopes, user_id, issued_by_api_key_id, expires_at)
        VALUES (${tenant.workspaceId}, ${tenant.environment}, ${token.name}, ${sql.binary(token.hash)}, ${token.prefix},
          ${sql.array([...token.scopes], 'text')}, ${token.userId}, ${token.issuedByApiKeyId},
          ${token.expiresAt ? sql.timestamp(token.expiresAt) : null})
        RETURNING ${columns}`);
    },

    async list(tenant: Tenant, window: PageWindow): Promise<readonly McpTokenRow[]> {
      return db.any(sql.type(mcpTokenRow)`
        SELECT ${columns} FROM mcp_tokens t
        WHERE t.workspace_id = ${tenant.workspaceId} AND t.environment = ${tenant.environment}
          AND ${olderThanCursor(window, 't')}
        ORDER BY t.created_at DESC, t.id DESC
        LIMIT ${window.fetch} OFFSET ${window.offset}`);
    },

    /**
     * Revokes a token (once: a second revocation keeps the first time), answering whether this call
     * revoked it; null when the tenant has no such token.
     */
    async revoke(tenant: Tenant, id: string): Promise<(McpTokenRow & { newly: boolean }) | null> {
      return db.maybeOne(sql.type(mcpTokenRow.extend({ newly: z.boolean() }))`
        UPDATE mcp_tokens t SET revoked_at = coalesce(t.revoked_at, ms_now())
        FROM (
          SELECT id, revoked_at FROM mcp_tokens
          WHERE id = ${id} AND workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
          FOR UPDATE
        ) before
        WHERE t.id = before.id
        RETURNING ${columns}, before.revoked_at IS NULL AS newly`);
    },

    async findByHash(hash: Buffer): Promise<McpTokenCredential | null> {
      return db.maybeOne(sql.type(mcpTokenCredential)`
        SELECT ${columns}, t.token_hash, u.active AS user_active
        FROM mcp_tokens t JOIN users u ON u.id = t.user_id AND u.workspace_id = t.workspace_id
        WHERE t.token_hash = ${sql.binary(hash)}`);
    },

    /** Records a use, at most once a minute: a busy MCP client does not write on every call. */
    async touch(id: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE mcp_tokens SET last_used_at = ms_now()
        WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ms_now() - interval '1 minute')`);
    },
  };
}
