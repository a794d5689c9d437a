import type { CommonQueryMethods } from 'slonik';
import { z } from 'zod';
import { type Environment, MEMBER_ROLES } from '../../vocabulary.ts';
import { sql } from '../sql.ts';

const userRow = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  email: z.string(),
  role: z.enum(MEMBER_ROLES),
  mfa_secret_sealed: z.string().nullable(),
});
export type UserRow = z.infer<typeof userRow>;

const mfaSecretRow = z.object({ id: z.uuid(), mfa_secret_sealed: z.string().nullable() });

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

    async mfaSecret(workspaceId: string, userId: string) {
      return db.maybeOne(sql.type(mfaSecretRow)`
        SELECT id, mfa_secret_sealed FROM users WHERE id = ${userId} AND workspace_id = ${workspaceId}`);
    },

    /**
     * Takes one verification attempt's place in the user's failure count for an environment, before its code
     * is checked: the count restarts when its window (`windowMs` from the first failure) is over. False, and
     * nothing counted, when `max` attempts already fill the window. One statement under the row lock, so
     * parallel attempts cannot exceed `max`.
     */
    async takeMfaAttempt(userId: string, environment: Environment, max: number, windowMs: number): Promise<boolean> {
      const windowOpen = sql.fragment`mfa_failures.window_start > ms_now() - ${windowMs}::integer * interval '1 millisecond'`;
      const taken = await db.maybeOneFirst(sql.type(z.object({ failures: z.number().int() }))`
        INSERT INTO mfa_failures (user_id, environment, failures, window_start)
        VALUES (${userId}, ${environment}, 1, ms_now())
        ON CONFLICT (user_id, environment) DO UPDATE SET
          failures = CASE WHEN ${windowOpen} THEN mfa_failures.failures + 1 ELSE 1 END,
          window_start = CASE WHEN ${windowOpen} THEN mfa_failures.window_start ELSE ms_now() END
        WHERE mfa_failures.failures < ${max} OR NOT (${windowOpen})
        RETURNING failures`);
      return taken !== null;
    },

    /** Milliseconds until the user's failures in an environment stop filling the window; 0 when not locked. */
    async mfaLockRemainingMs(userId: string, environment: Environment, max: number, windowMs: number) {
      const remaining = await db.maybeOneFirst(sql.type(z.object({ remaining_ms: z.number() }))`
        SELECT (EXTRACT(EPOCH FROM window_start + ${windowMs}::integer * interval '1 millisecond' - ms_now()) * 1000)::float8
               AS remaining_ms
        FROM mfa_failures
        WHERE user_id = ${userId} AND environment = ${environment} AND failures >= ${max}`);
      return Math.max(0, remaining ?? 0);
    },

    /** A right code forgives the attempts counted in that environment. */
    async clearMfaFailures(userId: string, environment: Environment): Promise<void> {
      await db.query(sql.typeAlias('void')`
        DELETE FROM mfa_failures WHERE user_id = ${userId} AND environment = ${environment}`);
    },

    /**
     * Records `step` as the user's last accepted TOTP time step, if it is later than the last one: true once per
     * step, so a code is never accepted twice (RFC 6238 section 5.2), even by parallel requests.
     */
    async acceptMfaStep(userId: string, step: number): Promise<boolean> {
      const accepted = await db.maybeOneFirst(sql.type(z.object({ id: z.uuid() }))`
        UPDATE users SET mfa_last_step = ${step}
        WHERE id = ${userId} AND (mfa_last_step IS NULL OR mfa_last_step < ${step})
        RETURNING id`);
      return accepted !== null;
    },
  };
}
