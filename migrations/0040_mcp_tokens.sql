-- MCP tokens (docs/mcp.md, "Tokens"): the `svc_mcp_` bearer an MCP client sends to the hosted
-- endpoint of its workspace. Each is bound to the workspace and environment of the API key that
-- issued it, holds the scopes it was granted (the tools it may run), and opens the MCP routes only.
-- The value is kept as a keyed hash (the API keys' pepper), never in clear.
CREATE TABLE mcp_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  environment environment NOT NULL,
  name text NOT NULL CHECK (length(name) <= 100),
  token_hash bytea NOT NULL UNIQUE,
  token_prefix text NOT NULL,
  scopes text[] NOT NULL CHECK (cardinality(scopes) > 0),
  -- The member the token acts for (tools run as them) and the key that issued it.
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  issued_by_api_key_id uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT ms_now()
);
CREATE INDEX mcp_tokens_tenant ON mcp_tokens (workspace_id, environment, created_at DESC, id DESC);
