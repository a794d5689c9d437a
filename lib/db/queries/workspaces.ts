import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { sql } from '../sql.ts';

const userRow = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  email: z.string(),
  role: z.enum(['owner', 'admin', 'member']),
  mfa_secret_sealed: z.string().nullable(),
});
export type UserRow = z.infer<typeof userRow>;

const mfaStateRow = z.object({
  id: z.uuid(),
  mfa_secret_sealed: z.string().nullable(),
  mfa_failures: z.number().int(),
  mfa_failures_since: z.date().nullable(),
});
export type MfaStateRow = z.infer<typeof mfaStateRow>;

const workspaceRow = z.object({ id: z.uuid(), name: z.string(), created_at: z.date() });
export type WorkspaceRow = z.infer<typeof workspaceRow>;

export function createWorkspaceQueries(db: CommonQueryMethods) {
  return {
    async insertWorkspace(name: string): Promise<WorkspaceRow> {
      return db.one(
        sql.type(workspaceRow)`INSERT INTO workspaces (name) VALUES (${name}) RETURNING id, name, created_at`,
      );
    },

    async findWorkspace(id: string): Promise<WorkspaceRow | null> {
      return db.maybeOne(sql.type(workspaceRow)`SELECT id, name, created_at FROM workspaces WHERE id = ${id}`);
    },

    async insertUser(workspaceId: string, email: string, role: UserRow['role'], mfaSecretSealed: string | null) {
      return db.one(sql.type(userRow)`
        INSERT INTO users (workspace_id, email, role, mfa_secret_sealed)
        VALUES (${workspaceId}, ${email}, ${role}, ${mfaSecretSealed})
        RETURNING id, workspace_id, email, role, mfa_secret_sealed`);
    },

    async findOwner(workspaceId: string): Promise<UserRow | null> {
      return db.maybeOne(sql.type(userRow)`
        SELECT id, workspace_id, email, role, mfa_secret_sealed FROM users
        WHERE workspace_id = ${workspaceId} AND role = 'owner'
        ORDER BY created_at LIMIT 1`);
    },

    async findUser(workspaceId: string, userId: string): Promise<UserRow | null> {
      return db.maybeOne(sql.type(userRow)`
        SELECT id, workspace_id, email, role, mfa_secret_sealed FROM users
        WHERE id = ${userId} AND workspace_id = ${workspaceId}`);
    },

    async mfaState(workspaceId: string, userId: string): Promise<MfaStateRow | null> {
      return db.maybeOne(sql.type(mfaStateRow)`
        SELECT id, mfa_secret_sealed, mfa_failures, mfa_failures_since FROM users
        WHERE id = ${userId} AND workspace_id = ${workspaceId}`);
    },

    async clearMfaFailures(userId: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE users SET mfa_failures = 0, mfa_failures_since = NULL WHERE id = ${userId} AND mfa_failures > 0`);
    },

    /** Counts a wrong code; the count restarts when the previous failures are older than `windowStart`. */
    async recordMfaFailure(userId: string, windowStart: Date): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE users SET
          mfa_failures = CASE WHEN mfa_failures_since > ${sql.timestamp(windowStart)} THEN mfa_failures + 1 ELSE 1 END,
          mfa_failures_since = CASE WHEN mfa_failures_since > ${sql.timestamp(windowStart)} THEN mfa_failures_since ELSE ms_now() END
        WHERE id = ${userId}`);
    },
  };
}
