import type { CommonQueryMethods, FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { SCIM_OPERATIONS, SCIM_RESOURCE_TYPES, type ScimOperation } from '../../scim/vocabulary.ts';
import type { Tenant } from '../../tenancy.ts';
import { ENVIRONMENTS, MEMBER_ROLES } from '../../vocabulary.ts';
import { sql } from '../sql.ts';

// SCIM provisioning (docs/scim.md): its tokens, the members' SCIM attributes (columns of `users`,
// which are workspace-level: shared by the environments), groups and the SCIM audit. Members and
// groups are filtered on the workspace only, since they have no environment; tokens and audit
// events on the workspace and the environment.

export const scimTokenRow = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  environment: z.enum(ENVIRONMENTS),
  name: z.string(),
  token_prefix: z.string(),
  created_by: z.uuid().nullable(),
  last_used_at: z.date().nullable(),
  revoked_at: z.date().nullable(),
  created_at: z.date(),
});
export type ScimTokenRow = z.infer<typeof scimTokenRow>;

const scimTokenCredential = scimTokenRow.extend({ token_hash: z.instanceof(Buffer) });
export type ScimTokenCredential = z.infer<typeof scimTokenCredential>;

export const scimEmail = z.object({
  value: z.string(),
  type: z.string().nullable().optional(),
  primary: z.boolean().optional(),
});
export type ScimEmail = z.infer<typeof scimEmail>;

export const scimUserRow = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  email: z.string(),
  role: z.enum(MEMBER_ROLES),
  user_name: z.string(),
  external_id: z.string().nullable(),
  active: z.boolean(),
  display_name: z.string().nullable(),
  given_name: z.string().nullable(),
  family_name: z.string().nullable(),
  middle_name: z.string().nullable(),
  formatted_name: z.string().nullable(),
  title: z.string().nullable(),
  preferred_language: z.string().nullable(),
  emails: z.array(scimEmail),
  employee_number: z.string().nullable(),
  cost_center: z.string().nullable(),
  organization: z.string().nullable(),
  division: z.string().nullable(),
  department: z.string().nullable(),
  manager_id: z.string().nullable(),
  scim_version: z.number().int(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type ScimUserRow = z.infer<typeof scimUserRow>;

/** What a SCIM client may set on a member: every stored attribute but the bookkeeping. */
export type ScimUserFields = {
  email: string;
  userName: string;
  externalId: string | null;
  active: boolean;
  displayName: string | null;
  givenName: string | null;
  familyName: string | null;
  middleName: string | null;
  formattedName: string | null;
  title: string | null;
  preferredLanguage: string | null;
  emails: ScimEmail[];
  employeeNumber: string | null;
  costCenter: string | null;
  organization: string | null;
  division: string | null;
  department: string | null;
  managerId: string | null;
};

export const scimGroupRow = z.object({
  id: z.uuid(),
  workspace_id: z.uuid(),
  display_name: z.string(),
  external_id: z.string().nullable(),
  scim_version: z.number().int(),
  created_at: z.date(),
  updated_at: z.date(),
});
export type ScimGroupRow = z.infer<typeof scimGroupRow>;

const groupMemberRow = z.object({ group_id: z.uuid(), user_id: z.uuid(), display: z.string() });
export type GroupMemberRow = z.infer<typeof groupMemberRow>;

export const scimAuditRow = z.object({
  id: z.uuid(),
  scim_token_id: z.uuid().nullable(),
  operation: z.enum(SCIM_OPERATIONS),
  resource_type: z.enum(SCIM_RESOURCE_TYPES),
  resource_id: z.string().nullable(),
  response_status: z.number().int(),
  error_message: z.string().nullable(),
  created_at: z.date(),
});
export type ScimAuditRow = z.infer<typeof scimAuditRow>;

export type NewScimAuditEvent = Omit<ScimAuditRow, 'id' | 'created_at'>;

/** A page of a SCIM list: 0-based offset, and how many rows at most. */
export type ScimWindow = { offset: number; count: number };

const tokenColumns = sql.fragment`
  t.id, t.workspace_id, t.environment, t.name, t.token_prefix, t.created_by, t.last_used_at, t.revoked_at, t.created_at`;

// Members made outside SCIM have no user_name: their e-mail address is their userName.
const userColumns = sql.fragment`
  u.id, u.workspace_id, u.email, u.role, coalesce(u.user_name, u.email) AS user_name, u.external_id, u.active,
  u.display_name, u.given_name, u.family_name, u.middle_name, u.formatted_name, u.title, u.preferred_language,
  CASE WHEN jsonb_array_length(u.emails) = 0 THEN jsonb_build_array(jsonb_build_object('value', u.email, 'primary', true))
       ELSE u.emails END AS emails,
  u.employee_number, u.cost_center, u.organization, u.division, u.department, u.manager_id, u.scim_version,
  u.created_at, u.updated_at`;

const groupColumns = sql.fragment`
  g.id, g.workspace_id, g.display_name, g.external_id, g.scim_version, g.created_at, g.updated_at`;

const auditColumns = sql.fragment`
  id, scim_token_id, operation, resource_type, resource_id, response_status, error_message, created_at`;

const idRow = z.object({ id: z.uuid() });
const countRow = z.object({ total: z.number().int() });

function userValues(fields: ScimUserFields) {
  return sql.fragment`
    email = ${fields.email}, user_name = ${fields.userName}, external_id = ${fields.externalId},
    active = ${fields.active}, display_name = ${fields.displayName}, given_name = ${fields.givenName},
    family_name = ${fields.familyName}, middle_name = ${fields.middleName}, formatted_name = ${fields.formattedName},
    title = ${fields.title}, preferred_language = ${fields.preferredLanguage},
    emails = ${sql.jsonb(fields.emails as never)}, employee_number = ${fields.employeeNumber},
    cost_center = ${fields.costCenter}, organization = ${fields.organization}, division = ${fields.division},
    department = ${fields.department}, manager_id = ${fields.managerId}`;
}

export function createScimQueries(db: CommonQueryMethods) {
  return {
    async insertToken(tenant: Tenant, name: string, hash: Buffer, prefix: string, createdBy: string) {
      return db.one(sql.type(scimTokenRow)`
        INSERT INTO scim_tokens AS t (workspace_id, environment, name, token_hash, token_prefix, created_by)
        VALUES (${tenant.workspaceId}, ${tenant.environment}, ${name}, ${sql.binary(hash)}, ${prefix}, ${createdBy})
        RETURNING ${tokenColumns}`);
    },

    async listTokens(tenant: Tenant): Promise<readonly ScimTokenRow[]> {
      return db.any(sql.type(scimTokenRow)`
        SELECT ${tokenColumns} FROM scim_tokens t
        WHERE t.workspace_id = ${tenant.workspaceId} AND t.environment = ${tenant.environment}
        ORDER BY t.created_at DESC, t.id DESC`);
    },

    /** Revokes a token; the row as it is afterwards, or null when the tenant has no such token. */
    async revokeToken(tenant: Tenant, id: string): Promise<ScimTokenRow | null> {
      return db.maybeOne(sql.type(scimTokenRow)`
        UPDATE scim_tokens t SET revoked_at = coalesce(t.revoked_at, ms_now())
        WHERE t.id = ${id} AND t.workspace_id = ${tenant.workspaceId} AND t.environment = ${tenant.environment}
        RETURNING ${tokenColumns}`);
    },

    async findTokenByHash(hash: Buffer): Promise<ScimTokenCredential | null> {
      return db.maybeOne(sql.type(scimTokenCredential)`
        SELECT ${tokenColumns}, t.token_hash FROM scim_tokens t WHERE t.token_hash = ${sql.binary(hash)}`);
    },

    async touchToken(id: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE scim_tokens SET last_used_at = ms_now()
        WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ms_now() - interval '1 minute')`);
    },

    async findUser(workspaceId: string, id: string, options: { forUpdate?: boolean } = {}) {
      return db.maybeOne(sql.type(scimUserRow)`
        SELECT ${userColumns} FROM users u
        WHERE u.id = ${id} AND u.workspace_id = ${workspaceId} AND u.deleted_at IS NULL
        ${options.forUpdate ? sql.fragment`FOR UPDATE` : sql.fragment``}`);
    },

    async listUsers(workspaceId: string, where: FragmentSqlToken, window: ScimWindow) {
      const scope = sql.fragment`u.workspace_id = ${workspaceId} AND u.deleted_at IS NULL AND (${where})`;
      const total = await db.oneFirst(sql.type(countRow)`SELECT count(*)::int AS total FROM users u WHERE ${scope}`);
      const rows =
        window.count === 0
          ? []
          : await db.any(sql.type(scimUserRow)`
              SELECT ${userColumns} FROM users u WHERE ${scope}
              ORDER BY u.created_at, u.id LIMIT ${window.count} OFFSET ${window.offset}`);
      return { total, rows };
    },

    async insertUser(workspaceId: string, fields: ScimUserFields): Promise<string> {
      return db.oneFirst(sql.type(idRow)`
        INSERT INTO users (workspace_id, email, role, user_name, external_id, active, display_name, given_name,
                           family_name, middle_name, formatted_name, title, preferred_language, emails,
                           employee_number, cost_center, organization, division, department, manager_id)
        VALUES (${workspaceId}, ${fields.email}, 'member', ${fields.userName}, ${fields.externalId}, ${fields.active},
                ${fields.displayName}, ${fields.givenName}, ${fields.familyName}, ${fields.middleName},
                ${fields.formattedName}, ${fields.title}, ${fields.preferredLanguage},
                ${sql.jsonb(fields.emails as never)}, ${fields.employeeNumber}, ${fields.costCenter},
                ${fields.organization}, ${fields.division}, ${fields.department}, ${fields.managerId})
        RETURNING id`);
    },

    async replaceUser(workspaceId: string, id: string, fields: ScimUserFields): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE users SET ${userValues(fields)}, scim_version = scim_version + 1, updated_at = ms_now()
        WHERE id = ${id} AND workspace_id = ${workspaceId} AND deleted_at IS NULL`);
    },

    /**
     * Erases a member deleted through SCIM: every attribute an identity provider sent is cleared, the
     * e-mail address replaced by one that names nobody, and the member is gone from SCIM answers.
     */
    async eraseUser(workspaceId: string, id: string, pseudonym: string): Promise<void> {
      await db.query(sql.typeAlias('void')`
        UPDATE users SET email = ${pseudonym}, user_name = NULL, external_id = NULL, active = false,
          display_name = NULL, given_name = NULL, family_name = NULL, middle_name = NULL, formatted_name = NULL,
          title = NULL, preferred_language = NULL, emails = '[]', employee_number = NULL, cost_center = NULL,
          organization = NULL, division = NULL, department = NULL, manager_id = NULL, mfa_secret_sealed = NULL,
          deleted_at = ms_now(), updated_at = ms_now(), scim_version = scim_version + 1
        WHERE id = ${id} AND workspace_id = ${workspaceId}`);
      await db.query(sql.typeAlias('void')`DELETE FROM scim_group_members WHERE user_id = ${id}`);
    },

    /** Revokes every API key of a member, in every environment; the ids revoked now. */
    async revokeUserKeys(workspaceId: string, userId: string): Promise<readonly string[]> {
      return db.anyFirst(sql.type(idRow)`
        UPDATE api_keys SET revoked_at = ms_now(), revocation_reason = 'other', is_active = false
        WHERE user_id = ${userId} AND workspace_id = ${workspaceId} AND revoked_at IS NULL
        RETURNING id`);
    },

    /** The workspace's members among `ids` (not deleted). */
    async existingUserIds(workspaceId: string, ids: readonly string[]): Promise<readonly string[]> {
      if (ids.length === 0) return [];
      return db.anyFirst(sql.type(idRow)`
        SELECT id FROM users
        WHERE workspace_id = ${workspaceId} AND deleted_at IS NULL AND id = ANY (${sql.array(ids, 'uuid')})`);
    },

    async findGroup(workspaceId: string, id: string, options: { forUpdate?: boolean } = {}) {
      return db.maybeOne(sql.type(scimGroupRow)`
        SELECT ${groupColumns} FROM scim_groups g WHERE g.id = ${id} AND g.workspace_id = ${workspaceId}
        ${options.forUpdate ? sql.fragment`FOR UPDATE` : sql.fragment``}`);
    },

    async listGroups(workspaceId: string, where: FragmentSqlToken, window: ScimWindow) {
      const scope = sql.fragment`g.workspace_id = ${workspaceId} AND (${where})`;
      const total = await db.oneFirst(
        sql.type(countRow)`SELECT count(*)::int AS total FROM scim_groups g WHERE ${scope}`,
      );
      const rows =
        window.count === 0
          ? []
          : await db.any(sql.type(scimGroupRow)`
              SELECT ${groupColumns} FROM scim_groups g WHERE ${scope}
              ORDER BY g.created_at, g.id LIMIT ${window.count} OFFSET ${window.offset}`);
      return { total, rows };
    },

    /** The members of groups, with the name SCIM shows for each. */
    async groupMembers(groupIds: readonly string[]): Promise<readonly GroupMemberRow[]> {
      if (groupIds.length === 0) return [];
      return db.any(sql.type(groupMemberRow)`
        SELECT m.group_id, m.user_id, coalesce(u.display_name, u.user_name, u.email) AS display
        FROM scim_group_members m JOIN users u ON u.id = m.user_id AND u.deleted_at IS NULL
        WHERE m.group_id = ANY (${sql.array(groupIds, 'uuid')})
        ORDER BY u.created_at, u.id`);
    },

    async insertGroup(workspaceId: string, displayName: string, externalId: string | null): Promise<string> {
      return db.oneFirst(sql.type(idRow)`
        INSERT INTO scim_groups (workspace_id, display_name, external_id)
        VALUES (${workspaceId}, ${displayName}, ${externalId}) RETURNING id`);
    },

    async updateGroup(workspaceId: string, id: string, displayName: string, externalId: string | null) {
      await db.query(sql.typeAlias('void')`
        UPDATE scim_groups SET display_name = ${displayName}, external_id = ${externalId},
          scim_version = scim_version + 1, updated_at = ms_now()
        WHERE id = ${id} AND workspace_id = ${workspaceId}`);
    },

    /** Sets a group's members to exactly `userIds` (members of the group's workspace, checked by the caller). */
    async setGroupMembers(groupId: string, userIds: readonly string[]): Promise<void> {
      await db.query(sql.typeAlias('void')`
        DELETE FROM scim_group_members WHERE group_id = ${groupId} AND NOT (user_id = ANY (${sql.array(userIds, 'uuid')}))`);
      await db.query(sql.typeAlias('void')`
        INSERT INTO scim_group_members (group_id, user_id)
        SELECT ${groupId}, unnest(${sql.array(userIds, 'uuid')}) ON CONFLICT DO NOTHING`);
    },

    async deleteGroup(workspaceId: string, id: string): Promise<boolean> {
      const deleted = await db.maybeOneFirst(sql.type(idRow)`
        DELETE FROM scim_groups WHERE id = ${id} AND workspace_id = ${workspaceId} RETURNING id`);
      return deleted !== null;
    },

    async insertAuditEvent(tenant: Tenant, event: NewScimAuditEvent): Promise<void> {
      await db.query(sql.typeAlias('void')`
        INSERT INTO scim_audit_events (workspace_id, environment, scim_token_id, operation, resource_type,
                                       resource_id, response_status, error_message)
        VALUES (${tenant.workspaceId}, ${tenant.environment}, ${event.scim_token_id}, ${event.operation},
                ${event.resource_type}, ${event.resource_id}, ${event.response_status}, ${event.error_message})`);
    },

    async listAuditEvents(tenant: Tenant, limit: number, operation: ScimOperation | null) {
      return db.any(sql.type(scimAuditRow)`
        SELECT ${auditColumns} FROM scim_audit_events
        WHERE workspace_id = ${tenant.workspaceId} AND environment = ${tenant.environment}
          ${operation ? sql.fragment`AND operation = ${operation}` : sql.fragment``}
        ORDER BY created_at DESC, id DESC
        LIMIT ${limit}`);
    },
  };
}
