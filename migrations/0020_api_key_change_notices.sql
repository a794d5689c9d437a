-- Every change that can end or narrow what an API key may do is announced on the channel
-- valise_api_keys_changed when it commits, whichever process or tool makes it: each API process
-- LISTENs and empties its credential cache (lib/api-keys/credential-cache.ts). Usage counters
-- (used_count, last_used_at) are not among the columns: they change all the time and decide
-- nothing, except a usage cap, which is checked against the database on every request.
CREATE FUNCTION announce_api_key_change() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM pg_notify('valise_api_keys_changed', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_changed
  AFTER UPDATE OF workspace_id, user_id, environment, key_type, scopes, is_active, allowed_ips, max_uses,
    expires_at, expired_at, revoked_at
    OR DELETE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION announce_api_key_change();

CREATE TRIGGER api_key_secrets_changed
  AFTER UPDATE OR DELETE ON api_key_secrets
  FOR EACH STATEMENT EXECUTE FUNCTION announce_api_key_change();
