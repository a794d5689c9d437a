-- A key's credential, as each API process caches it (lib/api-keys/credential-cache.ts), carries
-- its workspace's name and its user's email and role, which GET /v1/me answers without a query.
-- Changing those, or deleting the workspace or user, is announced on the same channel as a
-- change to the key itself (migration 0020), so no process answers with the old values once it
-- commits. mfa_last_step and the sealed MFA seed change on every verified code and are left out.
CREATE TRIGGER workspaces_changed
  AFTER UPDATE OF id, name OR DELETE ON workspaces
  FOR EACH STATEMENT EXECUTE FUNCTION announce_api_key_change();

CREATE TRIGGER users_changed
  AFTER UPDATE OF id, workspace_id, email, role OR DELETE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION announce_api_key_change();
