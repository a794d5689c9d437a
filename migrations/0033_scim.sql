-- SCIM 2.0 provisioning (docs/scim.md): identity providers (Entra ID, Okta) create, change,
-- deactivate and delete the workspace's members through /v1/scim, with a SCIM token of their own.

-- A member's SCIM attributes live on the member (users). userName defaults to the e-mail address
-- for members made outside SCIM, so an identity provider matching on userName finds them.
ALTER TABLE users
  ADD COLUMN user_name text CHECK (user_name IS NULL OR length(user_name) BETWEEN 1 AND 256),
  ADD COLUMN external_id text CHECK (external_id IS NULL OR length(external_id) <= 256),
  ADD COLUMN active boolean NOT NULL DEFAULT true,
  ADD COLUMN display_name text,
  ADD COLUMN given_name text,
  ADD COLUMN family_name text,
  ADD COLUMN middle_name text,
  ADD COLUMN formatted_name text,
  ADD COLUMN title text,
  ADD COLUMN preferred_language text,
  -- Every e-mail address the identity provider sent: [{value, type, primary}].
  ADD COLUMN emails jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(emails) = 'array'),
  -- The enterprise extension (urn:ietf:params:scim:schemas:extension:enterprise:2.0:User).
  ADD COLUMN employee_number text,
  ADD COLUMN cost_center text,
  ADD COLUMN organization text,
  ADD COLUMN division text,
  ADD COLUMN department text,
  ADD COLUMN manager_id text,
  -- Bumped on every change: the resource's ETag (meta.version).
  ADD COLUMN scim_version integer NOT NULL DEFAULT 1,
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT ms_now(),
  -- A member deleted through SCIM: erased (attributes cleared) and gone from every SCIM answer.
  ADD COLUMN deleted_at timestamptz;

CREATE UNIQUE INDEX users_workspace_user_name_unique
  ON users (workspace_id, lower(coalesce(user_name, email))) WHERE deleted_at IS NULL;

-- A member's active flag decides whether their API keys authenticate (the credential query reads
-- it): changing it is announced like a change of the key itself (migrations 0020, 0024).
DROP TRIGGER users_changed ON users;
CREATE TRIGGER users_changed
  AFTER UPDATE OF id, workspace_id, email, role, active, deleted_at OR DELETE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION announce_api_key_change();

-- SCIM bearer tokens (`scim_…`), kept as a keyed hash of the whole value, like API keys. They are
-- not cached: every SCIM request reads its token, so a revocation holds at once.
CREATE TABLE scim_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  name text NOT NULL CHECK (length(name) <= 100),
  token_hash bytea NOT NULL UNIQUE,
  token_prefix text NOT NULL,
  created_by uuid REFERENCES users (id) ON DELETE SET NULL,
  last_used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT ms_now()
);
CREATE INDEX scim_tokens_tenant ON scim_tokens (workspace_id, environment, created_at DESC, id DESC);

-- SCIM groups of the workspace's members.
CREATE TABLE scim_groups (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  display_name text NOT NULL CHECK (length(display_name) BETWEEN 1 AND 256),
  external_id text CHECK (external_id IS NULL OR length(external_id) <= 256),
  scim_version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT ms_now(),
  updated_at timestamptz NOT NULL DEFAULT ms_now()
);
CREATE INDEX scim_groups_workspace ON scim_groups (workspace_id, created_at, id);

CREATE TABLE scim_group_members (
  group_id uuid NOT NULL REFERENCES scim_groups (id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  PRIMARY KEY (group_id, user_id)
);
CREATE INDEX scim_group_members_user ON scim_group_members (user_id);

-- One row per SCIM operation, successful or not (GET /v1/scim/audit).
CREATE TABLE scim_audit_events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  scim_token_id uuid REFERENCES scim_tokens (id) ON DELETE SET NULL,
  operation text NOT NULL CHECK (operation IN ('create_user', 'update_user', 'delete_user', 'create_group',
    'update_group', 'delete_group', 'list_users', 'list_groups')),
  resource_type text NOT NULL CHECK (resource_type IN ('User', 'Group')),
  resource_id text,
  response_status integer NOT NULL,
  error_message text,
  created_at timestamptz NOT NULL DEFAULT ms_now()
);
CREATE INDEX scim_audit_events_tenant ON scim_audit_events (workspace_id, environment, created_at DESC, id DESC);
CREATE INDEX scim_audit_events_operation ON scim_audit_events (workspace_id, environment, operation, created_at DESC);
